//! Integers as JSON Schema reads them: any number with no fractional part,
//! so `2.0` is the integer 2, as the published schema promises. serde's own
//! integer fields refuse `2.0`; these accept it, and still refuse `2.5` or a
//! value out of range.

use serde::{Deserialize, Deserializer, de::Error};

fn whole<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i128, D::Error> {
    let number = serde_json::Number::deserialize(deserializer)?;
    if let Some(n) = number.as_i64() {
        return Ok(n.into());
    }
    if let Some(n) = number.as_u64() {
        return Ok(n.into());
    }
    match number.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 2f64.powi(63) => Ok(f as i128),
        _ => Err(D::Error::custom(format!(
            "expected a whole number, found {number}"
        ))),
    }
}

pub(crate) fn i64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    let n = whole(deserializer)?;
    i64::try_from(n).map_err(|_| D::Error::custom(format!("{n} is out of range")))
}

pub(crate) fn u16<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u16, D::Error> {
    let n = whole(deserializer)?;
    u16::try_from(n).map_err(|_| D::Error::custom(format!("{n} is not between 0 and 65535")))
}

#[cfg(test)]
mod tests {
    #[derive(serde::Deserialize)]
    struct Exit {
        #[serde(deserialize_with = "super::i64")]
        code: i64,
        #[serde(deserialize_with = "super::u16")]
        status: u16,
    }

    #[test]
    fn whole_numbers_in_any_notation_and_nothing_else() {
        let read = |text: &str| serde_json::from_str::<Exit>(text).map(|e| (e.code, e.status));
        assert_eq!(read(r#"{"code": -2.0, "status": 404}"#).unwrap(), (-2, 404));
        assert_eq!(
            read(r#"{"code": 9041228.0, "status": 2e2}"#).unwrap(),
            (9041228, 200)
        );
        assert!(read(r#"{"code": 2.5, "status": 200}"#).is_err());
        assert!(read(r#"{"code": 1, "status": 70000}"#).is_err());
        assert!(read(r#"{"code": "1", "status": 200}"#).is_err());
        let output: crate::Payload = serde_json::from_str(
            r#"{"type": "shell_command_output", "call_id": "c", "exit_code": 1.0}"#,
        )
        .unwrap();
        assert!(matches!(
            output,
            crate::Payload::ShellCommandOutput { exit_code: 1, .. }
        ));
    }
}
