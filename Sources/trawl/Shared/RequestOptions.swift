import ArgumentParser
import Trawl

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

extension RequestOption {
    /// A URL argument checked as the engine would check it, but before anything runs: a scheme other than http or
    /// https, whitespace or control characters, no host or a port out of range are usage errors (exit 2).
    static func checkURL(_ url: String, _ what: String = "the URL") throws {
        guard let problem = URLCheck.problem(in: url) else { return }
        let message =
            problem.message.hasPrefix("the URL ") ? " " + problem.message.dropFirst(8) : ": " + problem.message
        throw ValidationError("\(what) \(shown(url))\(message); \(problem.hint)")
    }

    /// `-H` values with CR, LF, NUL, DEL or another control character, or a name that is not a token: refused
    /// before anything is sent (libcurl would send CR/LF verbatim). The value is never printed: it may be a secret.
    static func checkHeaderCharacters(_ headers: [String]) throws {
        for header in headers {
            var (name, value) = HeaderOption.split(header)
            // curl's `-H 'Name;'` (send the header empty) has no colon: the name ends before the semicolon.
            if !header.contains(":"), name.hasSuffix(";") { name.removeLast() }
            if name.isEmpty || !HTTPMethod.isToken(name) {
                throw ValidationError(
                    "-H: the header name \(shown(name)) is not a token: use letters, digits and !#$%&'*+-.^_`|~ only")
            }
            if let bad = URLCheck.controlCharacter(in: value) {
                throw ValidationError(
                    "-H \(name): the value contains control character \(bad), which would split or corrupt the request")
            }
        }
    }

    /// Quoted for a message, control characters escaped, credentials hidden, and cut after 200 characters (a
    /// URL may be megabytes long).
    static func shown(_ text: String) -> String {
        let cut = text.count > 200 ? String(text.prefix(200)) + "…" : text
        let redacted = Redaction.url(cut, names: Redaction.defaultQueryNames)
        let escaped = redacted.unicodeScalars.map { scalar in
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }
        return "'" + escaped.joined() + "'"
    }
}
