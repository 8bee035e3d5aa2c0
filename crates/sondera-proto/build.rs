//! Compiles `proto/` with protox (a protobuf compiler in Rust), so building
//! needs no system `protoc`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../proto");
    let file = root.join("sondera/harness/v1/harness.proto");
    println!("cargo:rerun-if-changed={}", file.display());
    let descriptors = protox::compile([&file], [&root])?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        // Decode failures are the caller's error (see src/codec.rs).
        .codec_path("crate::WireCodec")
        .compile_fds(descriptors)?;
    Ok(())
}
