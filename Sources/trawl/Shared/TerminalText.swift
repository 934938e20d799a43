import Foundation
import Trawl

/// Text on its way to the terminal (stderr): credentials a URL carries literally (the values of `api_key`,
/// `token`, `access_token`, `key`, `client_secret`, `signature`, `sig`, `password`… and `user:password@`) shown
/// as `REDACTED`, and control characters a server may have put in a message (an escape sequence in a
/// `Location`, a header or a body excerpt) shown escaped, so nothing reaches the terminal as a command.
enum TerminalText {
    /// `text` made safe to print: redacted, then escaped (newlines and tabs are kept).
    ///
    /// ```swift
    /// TerminalText.safe("GET https://x.io/a?token=s3cret: \u{1B}]0;owned\u{07}")
    /// // "GET https://x.io/a?token=REDACTED: \\u{1B}]0;owned\\u{07}"
    /// ```
    static func safe(_ text: String) -> String {
        escapingControls(shorteningLines(shorteningWords(Redaction.text(text, names: Redaction.defaultQueryNames))))
    }

    /// Longest run of characters without a space or line break shown whole: a server's 1 MB next URL is a message's
    /// word too, and must not flood the terminal (twice, as the failure and its page).
    static let maxWord = 2048

    /// Longest line shown whole: server text with spaces in it (a Link target, a list of keys) is cut there.
    static let maxLine = 8192

    /// `text` with every line of more than `maxLine` characters cut to its start and a count of what was left out.
    static func shorteningLines(_ text: String) -> String {
        guard text.utf8.count > maxLine else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            guard line.count > maxLine else { return String(line) }
            return line.prefix(maxLine) + "…[\(line.count - maxLine) more characters]"
        }.joined(separator: "\n")
    }

    /// `text` with every run of more than `maxWord` characters without whitespace cut to its start and a count of
    /// what was left out.
    static func shorteningWords(_ text: String) -> String {
        guard text.utf8.count > maxWord else { return text }
        var out = ""
        var run = 0
        var skipped = 0
        func flush() {
            if skipped > 0 { out += "…[\(skipped) more characters]" }
            skipped = 0
        }
        for character in text {
            if character.isWhitespace {
                flush()
                run = 0
                out.append(character)
            } else if run < maxWord {
                run += 1
                out.append(character)
            } else {
                skipped += 1
            }
        }
        flush()
        return out
    }

    /// `text` with every control character but newline and tab written as `\u{XX}`: C0, DEL and C1 (which
    /// some terminals read as CSI).
    static func escapingControls(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                out.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// JSON or YAML text (already quoted and C0-escaped) with each C1 control written `\u0080`…`\u009F`, an escape
    /// both read back as the same character.
    static func escapingC1(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { (0x80...0x9F).contains($0.value) }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if (0x80...0x9F).contains(scalar.value) {
                out.append(contentsOf: "\\u00\(String(scalar.value, radix: 16, uppercase: true))".unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value == 0x0A || value == 0x09 { return false }
        return value < 0x20 || value == 0x7F || (0x80...0x9F).contains(value)
    }
}
