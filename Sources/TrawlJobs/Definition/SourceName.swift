/// The rule for a source's name, which becomes a file name (`--output-dir DIR` writes `DIR/NAME.jsonl`):
/// only `[A-Za-z0-9._-]`, not starting with `.`, at most 100 bytes. Anything else (`../x`, `a/b`, NUL, CR/LF,
/// spaces, an empty name) is refused before anything is sent, so a job file can never make trawl write outside
/// the directory it was given, or a hidden file.
///
/// ```swift
/// try SourceName.check("repos", field: "sources[0].name")       // fine
/// try SourceName.check("../etc", field: "sources[1].name")      // throws JobSpecError
/// ```
public enum SourceName {
    public static let maxBytes = 100

    public static func isSafe(_ name: String) -> Bool {
        problem(name) == nil
    }

    static func check(_ name: String, field: String) throws(JobSpecError) {
        guard let problem = problem(name) else { return }
        throw JobSpecError(
            code: .sourceName, field: field, "the source name \(quoted(name)) \(problem)",
            hint: "a source name becomes a file name: use only letters, digits, '.', '_' and '-', not starting with"
                + " '.', at most \(maxBytes) bytes")
    }

    private static func problem(_ name: String) -> String? {
        if name.isEmpty { return "is empty" }
        if name.utf8.count > maxBytes { return "is \(name.utf8.count) bytes long" }
        if name.hasPrefix(".") { return "starts with '.'" }
        if let bad = name.unicodeScalars.first(where: { !isAllowed($0) }) {
            return "contains \(describe(bad))"
        }
        return nil
    }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", ".", "_", "-": return true
        default: return false
        }
    }

    private static func describe(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "/": return "'/'"
        case "\0": return "a NUL byte"
        case "\r": return "a carriage return (CR)"
        case "\n": return "a line feed (LF)"
        case " ": return "a space"
        default:
            if scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value) {
                return "the control character U+\(String(scalar.value, radix: 16, uppercase: true))"
            }
            return "'\(scalar)'"
        }
    }

    /// The name as a shell-safe, terminal-safe quoted string: control characters escaped.
    static func quoted(_ name: String) -> String {
        var text = "'"
        for scalar in name.unicodeScalars {
            switch scalar {
            case "\0": text += "\\0"
            case "\r": text += "\\r"
            case "\n": text += "\\n"
            case "\t": text += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7f || (0x80..<0xa0).contains(scalar.value) {
                    text += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        }
        return text + "'"
    }
}
