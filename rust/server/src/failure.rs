//! A command's failure: its [error code](agents_core::error_code) and a message. The exit status
//! follows from the code's category
//! ([`Category::exit_code`](agents_core::error_code::Category::exit_code)): 2 when the caller
//! must change something (its arguments, its input, what it names, the configuration), 1 when
//! something failed (the database, a model, a bug).

use agents_core::error_code::ErrorCode;

/// A failed command: what failed, as a code, and the message for its standard error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The code.
    pub code: ErrorCode,
    /// What went wrong, naming the argument, the file or the field.
    pub message: String,
}

impl Failure {
    /// A failure of `code`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
        }
    }

    /// The process's exit status: the exit code of the code's category.
    pub fn exit_code(&self) -> u8 {
        self.code.category().exit_code()
    }

    /// A bad argument (`invalid_argument`, exit 2).
    pub fn argument(message: impl Into<String>) -> Failure {
        Failure::new(ErrorCode::InvalidArgument, message)
    }
}

/// A closure making a failure of `code` from any error's text (for `map_err`).
pub fn with<E: std::fmt::Display>(code: ErrorCode) -> impl Fn(E) -> Failure {
    move |e| Failure::new(code, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use agents_core::error_code::Category;

    #[test]
    fn the_exit_status_follows_the_category() {
        assert_eq!(Failure::argument("x").exit_code(), 2);
        assert_eq!(Failure::new(ErrorCode::UnknownAgent, "x").exit_code(), 2);
        assert_eq!(Failure::new(ErrorCode::InvalidOptions, "x").exit_code(), 2);
        assert_eq!(Failure::new(ErrorCode::DatabaseError, "x").exit_code(), 1);
        assert_eq!(Failure::new(ErrorCode::TurnFailed, "x").exit_code(), 1);
        for code in ErrorCode::ALL {
            let expected = match code.category() {
                Category::Input
                | Category::NotFound
                | Category::Conflict
                | Category::Denied
                | Category::Config => 2,
                _ => 1,
            };
            assert_eq!(Failure::new(code, "x").exit_code(), expected, "{code}");
        }
    }
}
