/// Whether a header field can ever be sent, asked before a request exists (a job file's `headers:` when the job
/// is read), with the rules the engine applies before it sends: a name that is one RFC 9110 token, a value
/// without CR, LF, NUL or other control characters (tab aside), and at most `longestValue` bytes.
///
/// ```swift
/// HeaderCheck.problem(name: "X-Tenant", value: "acme")      // nil
/// HeaderCheck.problem(name: "X-A: b", value: "c")           // "the header name 'X-A: b' is not a token …"
/// ```
public enum HeaderCheck {
    /// The longest header value sent (docs/security.md): libcurl refuses a received header line over 100 KB, and a
    /// value past this is a mistake (a file pasted in), not a field.
    public static let longestValue = 65_536

    /// Why the field cannot be sent, or `nil` when it can. The value is never quoted: it may be a credential.
    public static func problem(name: String, value: String) -> String? {
        if name.isEmpty { return "the header name is empty" }
        if !name.utf8.allSatisfy(HeaderValidation.isTokenByte) {
            return "the header name \(HTTPMethod.describe(name)) is not a token (letters, digits and "
                + "!#$%&'*+-.^_`|~ only; a colon or a space would split the request)"
        }
        if value.utf8.count > longestValue {
            return "the value of header '\(name)' is \(value.utf8.count) bytes, over the limit of \(longestValue)"
        }
        if let bad = HeaderValidation.firstInvalidCharacter(in: value) {
            return "the value of header '\(name)' contains control character \(bad)"
        }
        return nil
    }

    /// The first control character of `text` other than tab, described (`U+0000 (NUL) at byte 12`), or `nil`: no
    /// URL or header value holding one can be sent.
    public static func controlCharacter(in text: String) -> String? {
        HeaderValidation.firstInvalidCharacter(in: text)
    }
}
