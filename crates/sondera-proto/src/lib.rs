//! The wire format of the Sondera harness service.
//!
//! `proto/sondera/harness/v1/harness.proto` defines `HarnessService` and a
//! typed message for every payload, verdict and record of the event model.
//! The generated types live in [`v1`]; this crate converts between them and
//! `sondera-model` / `sondera-store` in both directions.
//!
//! Encoding never fails. Decoding checks what protobuf cannot: required
//! messages are present and enums carry a known value, and a
//! [`DecodeError`] names the field path that is wrong (`event.payload`,
//! `adjudicated.decision`, ...). Free-form JSON travels as `JsonValue`, which
//! keeps integers exact (a `u64` above 2^53 survives the round trip).

mod codec;
mod convert;

pub use codec::{WireCodec, WireDecoder};

pub use convert::{
    DecodeError, WireEnum, agent_record_from_wire, approval_from_wire, json_from_wire,
    json_to_wire, optional_enum, policy_sources_from_wire, put_grant_from_wire, summary_from_wire,
    timestamp_from_wire, timestamp_to_wire,
};

/// Generated messages, client and server of `sondera.harness.v1`. The
/// messages mirror `sondera-model`'s types, where each field is documented,
/// and the service's methods are documented in the `.proto` file. The code
/// is committed (`tests/generated_code.rs` keeps it in step with `proto/`),
/// so no build needs the protobuf compiler.
#[allow(missing_docs)]
pub mod v1 {
    include!("generated/sondera.harness.v1.rs");
}
