import ArgumentParser
import TrawlEngine

/// Parsing of request flags whose text reaches the wire: refused at parse time, as usage errors naming the flag.
enum RequestOption {
    /// `-X`: an RFC 9110 token only. libcurl writes the method into the request line as given, so a space, CR or
    /// LF would let `-X` rewrite the request or smuggle a second one.
    static func method(_ text: String) throws -> String {
        guard HTTPMethod.isToken(text) else {
            throw ValidationError(
                "an HTTP method is one token of letters, digits and !#$%&'*+-.^_`|~ (GET, POST, PATCH…), "
                    + "without spaces or control characters")
        }
        return text
    }
}
