//! The codec of the generated client and server: prost's, except that a
//! message that cannot be decoded (malformed, or nested past prost's
//! recursion limit) is the caller's error, `INVALID_ARGUMENT`, rather than
//! the `INTERNAL` that says the service failed.

use tonic::codec::{BufferSettings, Codec, DecodeBuf, Decoder};
use tonic::{Code, Status};
use tonic_prost::{ProstCodec, ProstDecoder, ProstEncoder};

/// [`ProstCodec`] with decode failures reported as `INVALID_ARGUMENT`.
#[derive(Debug, Clone)]
pub struct WireCodec<T, U>(ProstCodec<T, U>);

impl<T, U> Default for WireCodec<T, U> {
    fn default() -> Self {
        Self(ProstCodec::default())
    }
}

impl<T, U> Codec for WireCodec<T, U>
where
    T: prost::Message + Send + 'static,
    U: prost::Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = WireDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        self.0.encoder()
    }

    fn decoder(&mut self) -> Self::Decoder {
        WireDecoder(self.0.decoder())
    }
}

/// The decoder of [`WireCodec`].
#[derive(Debug)]
pub struct WireDecoder<U>(ProstDecoder<U>);

impl<U: prost::Message + Default> Decoder for WireDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        self.0.decode(buf).map_err(|status| {
            if status.code() == Code::Internal {
                Status::invalid_argument(format!(
                    "the message cannot be decoded: {}",
                    status.message()
                ))
            } else {
                status
            }
        })
    }

    fn buffer_settings(&self) -> BufferSettings {
        self.0.buffer_settings()
    }
}
