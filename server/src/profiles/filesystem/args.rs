//! Reading a call's arguments the contract's way: a missing or mistyped parameter is -32602
//! naming it; `null` counts as absent; parameters the contract does not know are ignored.

use serde_json::{Map, Value};

use super::{rpc, INVALID_PARAMS};
use crate::profiles::CallError;
use crate::tools::json_type;

/// A call's arguments.
#[derive(Debug, Clone, Default)]
pub struct Args(Map<String, Value>);

impl Args {
    /// The arguments of a call: a JSON object, or nothing.
    pub fn new(v: Value) -> Result<Args, CallError> {
        match v {
            Value::Null => Ok(Args::default()),
            Value::Object(m) => Ok(Args(m)),
            other => Err(invalid(format!("arguments must be a JSON object, got {}", json_type(&other)))),
        }
    }

    /// The raw value of `key`, `None` when absent or `null`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key).filter(|v| !v.is_null())
    }

    /// The first of `keys` that is present: the canonical name first, then its legacy aliases.
    pub fn first_of<'a>(&self, keys: &[&'a str]) -> Option<&'a str> {
        keys.iter().copied().find(|k| self.get(k).is_some())
    }

    /// An optional string.
    pub fn str(&self, key: &str) -> Result<Option<String>, CallError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(wrong(key, "a string", v)),
        }
    }

    /// A required, non-empty string.
    pub fn req_str(&self, key: &str) -> Result<String, CallError> {
        match self.str(key)? {
            Some(s) if !s.is_empty() => Ok(s),
            Some(_) => Err(invalid(format!("`{key}` must not be empty"))),
            None => Err(missing(key)),
        }
    }

    /// A required string that may be empty (file content, replacement text).
    pub fn req_text(&self, key: &str) -> Result<String, CallError> {
        self.str(key)?.ok_or_else(|| missing(key))
    }

    /// An optional boolean with its default.
    pub fn bool(&self, key: &str, default: bool) -> Result<bool, CallError> {
        match self.get(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(wrong(key, "a boolean", v)),
        }
    }

    /// An optional integer within `min..=max`.
    pub fn int(&self, key: &str, min: i64, max: i64) -> Result<Option<i64>, CallError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => match v.as_i64() {
                Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
                Some(n) => Err(invalid(format!("`{key}` must be between {min} and {max}, got {n}"))),
                None => Err(wrong(key, "an integer", v)),
            },
        }
    }

    /// An optional array of strings.
    pub fn strs(&self, key: &str) -> Result<Option<Vec<String>>, CallError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => Ok(s.clone()),
                    v => Err(wrong(&format!("{key}[{i}]"), "a string", v)),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(v) => Err(wrong(key, "an array of strings", v)),
        }
    }

    /// A required, non-empty array of strings.
    pub fn req_strs(&self, key: &str) -> Result<Vec<String>, CallError> {
        match self.strs(key)? {
            Some(v) if !v.is_empty() => Ok(v),
            Some(_) => Err(invalid(format!("`{key}` must not be empty"))),
            None => Err(missing(key)),
        }
    }
}

/// A -32602 error.
pub fn invalid(message: impl Into<String>) -> CallError {
    rpc(INVALID_PARAMS, format!("Invalid params: {}", message.into()))
}

/// The -32602 error for a missing required parameter.
pub fn missing(key: &str) -> CallError {
    invalid(format!("missing required parameter `{key}`"))
}

fn wrong(key: &str, want: &str, got: &Value) -> CallError {
    invalid(format!("`{key}` must be {want}, got {}", json_type(got)))
}
