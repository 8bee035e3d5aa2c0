//! One error type for every operation, mapped to a gRPC status and to an
//! HTTP response with the same message.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use sondera_store::StoreError;

/// Why the service refused or failed a request; each maps to one gRPC code
/// and one HTTP status.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ServiceError {
    /// The request is malformed; the message names the field.
    #[error("{0}")]
    InvalidArgument(String),
    /// A request or event over a configured limit; the message names the limit.
    #[error("{0}")]
    TooLarge(String),
    /// A body that is not JSON.
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// What the request names does not exist (for the caller's tenant).
    #[error("{0}")]
    NotFound(String),
    /// What the request creates exists already.
    #[error("{0}")]
    AlreadyExists(String),
    /// The request does not fit the state it meets (an ended trajectory).
    #[error("{0}")]
    FailedPrecondition(String),
    /// Another writer appended to the trajectory first, again and again.
    #[error("{0}")]
    Aborted(String),
    /// No valid bearer token.
    #[error("missing or invalid bearer token: send `authorization: Bearer <token>`")]
    Unauthenticated,
    /// The token is valid but its role may not do this.
    #[error("{0}")]
    PermissionDenied(String),
    /// The caller must wait before trying again (failed sign-ins).
    #[error("{0}")]
    TooManyRequests(String),
    /// The request took longer than its deadline.
    #[error(
        "the request took longer than the {0:?} limit (--request-timeout); a step still being judged then is not recorded and may be sent again, but one already being written may still have been recorded"
    )]
    Timeout(std::time::Duration),
    /// A live subscriber fell too far behind and was dropped.
    #[error("subscriber fell {missed} events behind and was dropped; reconnect to follow again")]
    SlowSubscriber {
        /// How many events it missed.
        missed: u64,
    },
    /// The store cannot be reached now; the request may succeed later.
    #[error("the trajectory store is unavailable: {0}")]
    Unavailable(String),
    /// Something failed that the caller cannot fix.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::DuplicateEvent(_) | StoreError::DuplicateTrajectory(_) => {
                Self::AlreadyExists(e.to_string())
            }
            StoreError::UnknownTrajectory(_) => Self::NotFound(e.to_string()),
            StoreError::InvalidCursor(_) => Self::InvalidArgument(e.to_string()),
            StoreError::Conflict { .. } => Self::Aborted(e.to_string()),
            other => Self::Unavailable(other.to_string()),
        }
    }
}

impl From<sondera_proto::DecodeError> for ServiceError {
    fn from(e: sondera_proto::DecodeError) -> Self {
        Self::InvalidArgument(format!("invalid message: {e}"))
    }
}

impl ServiceError {
    /// The gRPC status code it is answered with.
    pub fn code(&self) -> tonic::Code {
        use tonic::Code;
        match self {
            Self::InvalidArgument(_) | Self::TooLarge(_) | Self::UnsupportedMediaType(_) => {
                Code::InvalidArgument
            }
            Self::NotFound(_) => Code::NotFound,
            Self::AlreadyExists(_) => Code::AlreadyExists,
            Self::FailedPrecondition(_) => Code::FailedPrecondition,
            Self::Aborted(_) => Code::Aborted,
            Self::Unauthenticated => Code::Unauthenticated,
            Self::PermissionDenied(_) => Code::PermissionDenied,
            Self::Timeout(_) => Code::DeadlineExceeded,
            Self::SlowSubscriber { .. } | Self::TooManyRequests(_) => Code::ResourceExhausted,
            Self::Unavailable(_) => Code::Unavailable,
            Self::Internal(_) => Code::Internal,
        }
    }

    /// The HTTP status it is answered with.
    pub fn http_status(&self) -> StatusCode {
        match self {
            Self::InvalidArgument(_) => StatusCode::BAD_REQUEST,
            Self::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::AlreadyExists(_) | Self::FailedPrecondition(_) | Self::Aborted(_) => {
                StatusCode::CONFLICT
            }
            Self::Unauthenticated => StatusCode::UNAUTHORIZED,
            Self::PermissionDenied(_) => StatusCode::FORBIDDEN,
            Self::Timeout(_) => StatusCode::GATEWAY_TIMEOUT,
            Self::SlowSubscriber { .. } | Self::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            Self::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The gRPC status code's canonical name (`NOT_FOUND`, ...).
    pub fn code_name(&self) -> &'static str {
        code_name(self.code())
    }
}

pub(crate) fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code;
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

impl From<ServiceError> for tonic::Status {
    fn from(e: ServiceError) -> Self {
        tonic::Status::new(e.code(), e.to_string())
    }
}

impl IntoResponse for ServiceError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({
            "error": { "code": self.code_name(), "message": self.to_string() }
        });
        let mut response = (self.http_status(), axum::Json(body)).into_response();
        if matches!(self, Self::Unauthenticated) {
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}
