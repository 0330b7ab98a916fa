//! The environment as recount reads it: a variable set to nothing is not set. `RECOUNT_LAB=`
//! in a script means no lab was named, as XDG's base directory rules say of `XDG_DATA_HOME=`.

use std::ffi::OsString;

/// `name`'s value, or None when it is unset or empty.
pub fn var(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_empty_variable_is_not_set() {
        // PATH is set in any test run; a name no one sets is not.
        assert!(super::var("PATH").is_some());
        assert!(super::var("RECOUNT_A_NAME_NO_ONE_SETS").is_none());
    }
}
