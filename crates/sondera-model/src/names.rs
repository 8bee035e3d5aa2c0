//! Enums known by their `snake_case` names, on the wire and in messages.
//!
//! [`named_enum!`](crate::named_enum) writes such an enum with its one
//! derive list, `as_str`, `Display` and `FromStr`; [`wire_enum!`](crate::wire_enum)
//! adds the serde and JSON Schema derives of an enum that crosses the wire.
//! Every enum that is parsed from and printed as its name is written with
//! one of them, so the names, the parser and the message for a wrong name
//! cannot differ from one enum to the next.

use std::fmt;

/// A name that is none of an enum's variants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownName {
    /// What the enum names (`mode`, `approval`).
    pub kind: &'static str,
    /// The name given.
    pub found: String,
    /// The names it could have been: `a, b or c`.
    pub expected: String,
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} `{}`: expected {}",
            self.kind, self.found, self.expected
        )
    }
}

impl std::error::Error for UnknownName {}

/// The variant of `T` whose name (as strum writes it) is `name`: the one
/// parser for every enum whose names are derived.
pub fn variant_named<T>(name: &str) -> Option<T>
where
    T: strum::VariantArray + Copy + Into<&'static str>,
{
    T::VARIANTS.iter().copied().find(|v| (*v).into() == name)
}

/// The names of `T`'s variants, for messages: `a, b or c`.
pub fn variant_names<T>() -> String
where
    T: strum::VariantArray + Copy + Into<&'static str>,
{
    let names: Vec<&str> = T::VARIANTS.iter().map(|v| (*v).into()).collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The variant of `T` named `name`, or an error that lists the names.
pub fn parse_name<T>(kind: &'static str, name: &str) -> Result<T, UnknownName>
where
    T: strum::VariantArray + Copy + Into<&'static str>,
{
    variant_named(name).ok_or_else(|| UnknownName {
        kind,
        found: name.to_string(),
        expected: variant_names::<T>(),
    })
}

/// Writes a fieldless enum known by its `snake_case` names: the derives
/// every such enum has (`Debug`, `Clone`, `Copy`, `PartialEq`, `Eq`,
/// `Hash`, and strum's names), `as_str`, `Display`, and `FromStr` whose
/// error, an [`UnknownName`], lists the names. The literal after the
/// enum's name says what it names, for that error.
///
/// ```
/// sondera_model::named_enum! {
///     /// How loud a message is.
///     pub enum Volume: "volume" {
///         Quiet,
///         VeryLoud,
///     }
/// }
/// assert_eq!(Volume::VeryLoud.to_string(), "very_loud");
/// assert_eq!("quiet".parse::<Volume>(), Ok(Volume::Quiet));
/// assert_eq!(
///     "loud".parse::<Volume>().unwrap_err().to_string(),
///     "unknown volume `loud`: expected quiet or very_loud"
/// );
/// ```
#[macro_export]
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident : $kind:literal {
            $( $(#[$variant_meta:meta])* $variant:ident ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(
            Debug,
            Clone,
            Copy,
            PartialEq,
            Eq,
            Hash,
            $crate::__names::strum::IntoStaticStr,
            $crate::__names::strum::VariantArray,
        )]
        #[strum(crate = "sondera_model::__names::strum", serialize_all = "snake_case")]
        $vis enum $name {
            $( $(#[$variant_meta])* $variant ),+
        }

        impl $name {
            /// The variant's name.
            pub fn as_str(self) -> &'static str {
                self.into()
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::UnknownName;

            fn from_str(name: &str) -> ::std::result::Result<Self, Self::Err> {
                $crate::parse_name($kind, name)
            }
        }
    };
}

/// [`named_enum!`](crate::named_enum) for an enum that crosses the wire:
/// serialised, deserialised and described in the JSON Schema by the same
/// `snake_case` names.
///
/// ```
/// sondera_model::wire_enum! {
///     /// Where a message goes.
///     pub enum Channel: "channel" {
///         Email,
///         TextMessage,
///     }
/// }
/// assert_eq!(serde_json::to_string(&Channel::TextMessage).unwrap(), "\"text_message\"");
/// ```
#[macro_export]
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident : $kind:literal { $($body:tt)* }
    ) => {
        $crate::named_enum! {
            $(#[$meta])*
            #[derive(
                $crate::__names::serde::Serialize,
                $crate::__names::serde::Deserialize,
                $crate::__names::schemars::JsonSchema,
            )]
            #[serde(crate = "sondera_model::__names::serde", rename_all = "snake_case")]
            #[schemars(crate = "sondera_model::__names::schemars")]
            $vis enum $name : $kind { $($body)* }
        }
    };
}
