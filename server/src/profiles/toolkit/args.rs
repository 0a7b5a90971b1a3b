//! The toolkit's arguments: single values or arrays, checked field by field, with messages in
//! the contract's words.

use serde_json::{Map, Value};

use crate::tools::json_type;

/// A tool's arguments, known to hold only the fields its schema lists.
#[derive(Debug, Clone)]
pub(super) struct Args {
    map: Map<String, Value>,
}

/// A parameter given either once for all files or once per file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

impl<T: Clone> OneOrMany<T> {
    /// One value per file for `n` files: a single value serves every file, an array must have
    /// exactly `n` entries.
    pub(super) fn spread(self, n: usize, field: &str) -> Result<Vec<T>, String> {
        match self {
            OneOrMany::One(v) => Ok(vec![v; n]),
            OneOrMany::Many(v) if v.len() == n => Ok(v),
            OneOrMany::Many(v) => Err(format!(
                "{field} has {} entries but path has {n}; give one entry per path, or a single value for all",
                v.len()
            )),
        }
    }
}

impl Args {
    /// Checks that `args` is an object whose fields all appear in `schema`'s properties.
    pub(super) fn new(args: Value, schema: &Value) -> Result<Args, String> {
        let map = match args {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            other => return Err(format!("arguments must be a JSON object, got {}", json_type(&other))),
        };
        let known = schema["properties"].as_object();
        let is_known = |k: &str| known.is_some_and(|p| p.contains_key(k));
        if let Some(k) = map.keys().find(|k| !is_known(k)) {
            let names: Vec<&str> = known.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
            return Err(format!("Unknown parameter: {k} (parameters: {})", names.join(", ")));
        }
        Ok(Args { map })
    }

    /// The value of `field`, treating `null` as absent.
    fn get(&self, field: &str) -> Option<&Value> {
        self.map.get(field).filter(|v| !v.is_null())
    }

    fn required(&self, field: &str) -> Result<&Value, String> {
        self.get(field).ok_or_else(|| format!("Missing required parameter: {field}"))
    }

    /// Whether `field` was given as an array.
    pub(super) fn is_array(&self, field: &str) -> bool {
        self.get(field).is_some_and(Value::is_array)
    }

    /// A required string.
    pub(super) fn string(&self, field: &str) -> Result<String, String> {
        match self.required(field)? {
            Value::String(s) => Ok(s.clone()),
            other => Err(format!("{field} must be a string, got {}", json_type(other))),
        }
    }

    /// An optional string.
    pub(super) fn opt_string(&self, field: &str) -> Result<Option<String>, String> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(format!("{field} must be a string, got {}", json_type(other))),
        }
    }

    /// An optional boolean, `default` when absent.
    pub(super) fn flag(&self, field: &str, default: bool) -> Result<bool, String> {
        match self.get(field) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(format!("{field} must be true or false, got {}", json_type(other))),
        }
    }

    /// An optional integer of at least `min`.
    pub(super) fn opt_int(&self, field: &str, min: i64) -> Result<Option<i64>, String> {
        self.get(field).map(|v| int(field, v, min)).transpose()
    }

    /// A required string, or a non-empty array of strings.
    pub(super) fn strings(&self, field: &str) -> Result<OneOrMany<String>, String> {
        let bad = |v: &Value| format!("{field} must be a string or an array of strings, got {}", json_type(v));
        match self.required(field)? {
            Value::String(s) => Ok(OneOrMany::One(s.clone())),
            Value::Array(items) => {
                if items.is_empty() {
                    return Err(format!("{field} is an empty array; give at least one entry"));
                }
                items
                    .iter()
                    .map(|v| v.as_str().map(str::to_owned).ok_or_else(|| bad(v)))
                    .collect::<Result<_, _>>()
                    .map(OneOrMany::Many)
            }
            other => Err(bad(other)),
        }
    }

    /// A required integer of at least `min`, or a non-empty array of them.
    pub(super) fn ints(&self, field: &str, min: i64) -> Result<OneOrMany<i64>, String> {
        match self.required(field)? {
            Value::Array(items) => {
                if items.is_empty() {
                    return Err(format!("{field} is an empty array; give at least one entry"));
                }
                items.iter().map(|v| int(field, v, min)).collect::<Result<_, _>>().map(OneOrMany::Many)
            }
            v => int(field, v, min).map(OneOrMany::One),
        }
    }
}

/// `v` as an integer of at least `min`.
fn int(field: &str, v: &Value, min: i64) -> Result<i64, String> {
    let n = v.as_i64().ok_or_else(|| match v {
        Value::Number(_) => format!("{field} must be a whole number, got {v}"),
        other => format!("{field} must be an integer, got {}", json_type(other)),
    })?;
    if n < min {
        let what = if min == 0 { "0 or more".to_owned() } else { format!("at least {min} (lines are 1-based)") };
        return Err(format!("{field} must be {what}, got {n}"));
    }
    Ok(n)
}

/// Refuses a path named twice, since each file gets one change per call.
pub(super) fn no_duplicates(paths: &[String]) -> Result<(), String> {
    for (i, p) in paths.iter().enumerate() {
        if paths[..i].contains(p) {
            return Err(format!("{p} is listed more than once in path; give each file once"));
        }
    }
    Ok(())
}
