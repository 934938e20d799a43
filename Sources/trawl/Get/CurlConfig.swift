import Foundation

/// A curl config file (`-K FILE`, `~/.curlrc`) as curl reads it: one option a line, `option = value`,
/// `option: value` or `option value`, the leading dashes optional (`silent`, `--silent`, `-s`), `"quoted values"`
/// with `\"`, `\\`, `\t`, `\n`, `\r`, `\v`, and `#` comments. Read whole, up to 1 MiB (a config is a few lines; a
/// device or a huge file named by mistake is refused, not read forever).
enum CurlConfig {
    static let maxBytes = 1 << 20

    static func read(_ path: String, flag: String) throws -> [String] {
        let bytes: [UInt8]
        if path == "-" {
            bytes = Array(FileHandle.standardInput.readData(ofLength: maxBytes + 1))
        } else {
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw CurlArguments.Unknown(description: "\(flag): cannot read the config '\(TerminalText.safe(path))'")
            }
            defer { try? handle.close() }
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                throw CurlArguments.Unknown(description: "\(flag): '\(TerminalText.safe(path))' is a directory")
            }
            bytes = Array((try? handle.read(upToCount: maxBytes + 1)) ?? Data())
        }
        guard bytes.count <= maxBytes else {
            throw CurlArguments.Unknown(
                description: "\(flag): the config '\(TerminalText.safe(path))' is larger than 1 MiB")
        }
        return try parse(String(decoding: bytes, as: UTF8.self), path: path)
    }

    /// The arguments the text stands for, each option with its dashes.
    static func parse(_ text: String, path: String) throws -> [String] {
        var arguments: [String] = []
        for (number, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
            .enumerated()
        {
            var line = Substring(rawLine).drop(while: { $0 == " " || $0 == "\t" })
            guard let first = line.first, first != "#" else { continue }
            let name = line.prefix(while: { !($0 == " " || $0 == "\t" || $0 == "=" || $0 == ":") })
            line = line.dropFirst(name.count).drop(while: { $0 == " " || $0 == "\t" })
            if let separator = line.first, separator == "=" || separator == ":" {
                line = line.dropFirst().drop(while: { $0 == " " || $0 == "\t" })
            }
            let option = name.hasPrefix("-") ? String(name) : "--" + name
            arguments.append(option)
            guard takesValue(option) else { continue }
            if line.first == "\"" {
                var value = ""
                var rest = line.dropFirst()
                var closed = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if character == "\"" {
                        closed = true
                        break
                    }
                    if character == "\\", let escaped = rest.first {
                        rest = rest.dropFirst()
                        switch escaped {
                        case "t": value.append("\t")
                        case "n": value.append("\n")
                        case "r": value.append("\r")
                        case "v": value.append("\u{0B}")
                        default: value.append(escaped)
                        }
                    } else {
                        value.append(character)
                    }
                }
                guard closed else {
                    throw CurlArguments.Unknown(
                        description: "\(TerminalText.safe(path)):\(number + 1): a quoted value is not closed")
                }
                arguments.append(value)
            } else {
                arguments.append(String(line.prefix(while: { !($0 == " " || $0 == "\t") })))
            }
        }
        return arguments
    }

    /// Whether the option (`--name` or `-x`) takes a value; an unknown one is left for `expand` to report.
    static func takesValue(_ option: String) -> Bool {
        if option.hasPrefix("--") {
            let name = String(option.dropFirst(2))
            return name == "url" || CurlArguments.long[name] == true
        }
        guard option.count == 2, let letter = option.last, let name = CurlArguments.short[letter] else { return false }
        return CurlArguments.long[name] == true
    }
}
