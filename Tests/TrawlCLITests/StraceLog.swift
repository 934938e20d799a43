import Foundation

// The reader of `strace -f -y -o FILE` output that DurabilityCLITests checks the durability order with.

// MARK: - strace's output

/// One completed system call, from `strace -f -y -o FILE`.
struct TracedCall: CustomStringConvertible {
    var pid: Int
    var name: String
    /// The arguments as strace printed them (strings still quoted and escaped).
    var arguments: [String]
    /// What follows `=`: `0`, `13</path>`, `-1 ENOENT (...)`.
    var result: String
    /// Line numbers where the call began and where it returned (they differ for a call strace printed as
    /// `<unfinished ...>` and `<... resumed>` because another thread's call came in between).
    var start: Int
    var end: Int

    var description: String {
        "line \(start)\(end == start ? "" : "-\(end)") [pid \(pid)] \(name)(\(arguments.joined(separator: ", ")))"
            + " = \(result)"
    }

    /// The call succeeded.
    var succeeded: Bool { !result.hasPrefix("-") && !result.isEmpty && result != "?" }

    /// The path strace shows for a descriptor argument (`13</dir/file>`, `AT_FDCWD</cwd>`) or the result.
    static func descriptorPath(_ text: String) -> String? {
        guard let open = text.firstIndex(of: "<"), text.hasSuffix(">") else { return nil }
        return String(text[text.index(after: open)..<text.index(before: text.endIndex)])
    }

    /// The bytes of a quoted argument (`"..."`, possibly followed by `...` when strace cut it).
    static func string(_ text: String) -> (bytes: [UInt8], cut: Bool)? {
        var bytes: [UInt8] = []
        let scalars = Array(text.utf8)
        guard scalars.first == UInt8(ascii: "\"") else { return nil }
        var index = 1
        func octal(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "7") }
        while index < scalars.count {
            let byte = scalars[index]
            if byte == UInt8(ascii: "\"") {
                return (bytes, text.utf8.count > index + 1 && text.hasSuffix("..."))
            }
            guard byte == UInt8(ascii: "\\"), index + 1 < scalars.count else {
                bytes.append(byte)
                index += 1
                continue
            }
            let escaped = scalars[index + 1]
            index += 2
            switch escaped {
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "v"): bytes.append(0x0B)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "x"):
                let hex = String(decoding: scalars[index..<min(index + 2, scalars.count)], as: UTF8.self)
                guard let value = UInt8(hex, radix: 16) else { return nil }
                bytes.append(value)
                index += 2
            case let digit where octal(digit):
                var value = Int(digit - UInt8(ascii: "0"))
                var digits = 1
                while digits < 3, index < scalars.count, octal(scalars[index]) {
                    value = value * 8 + Int(scalars[index] - UInt8(ascii: "0"))
                    index += 1
                    digits += 1
                }
                bytes.append(UInt8(truncatingIfNeeded: value))
            default: bytes.append(escaped)  // \\ and \"
            }
        }
        return nil
    }
}

enum StraceLog {
    /// The calls in `text`, in the order they returned. Handles the `PID ` prefix of `-f -o` and the `[pid N] `
    /// one strace uses on stderr, and joins `<unfinished ...>` with its `<... NAME resumed>` line of the same
    /// thread. Signals (`--- ... ---`) and exits (`+++ ... +++`) are skipped.
    static func parse(_ text: String) -> [TracedCall] {
        var calls: [TracedCall] = []
        var unfinished: [Int: (text: String, start: Int)] = [:]
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = Substring(rawLine)
            var pid = 0
            if line.hasPrefix("[pid ") {
                let digits = line.dropFirst(5).prefix { $0 == " " || $0.isNumber }
                pid = Int(digits.trimmingCharacters(in: .whitespaces)) ?? 0
                line = line.dropFirst(5 + digits.count).drop { $0 == "]" || $0 == " " }
            } else if let first = line.first, first.isNumber {
                let digits = line.prefix { $0.isNumber }
                pid = Int(digits) ?? 0
                line = line.dropFirst(digits.count).drop { $0 == " " }
            }
            if line.hasPrefix("---") || line.hasPrefix("+++") || line.isEmpty { continue }
            var start = number
            var whole = String(line)
            if line.hasPrefix("<... ") {
                guard let marker = line.range(of: " resumed>"), let begun = unfinished.removeValue(forKey: pid) else {
                    continue
                }
                whole = begun.text + line[marker.upperBound...]
                start = begun.start
            }
            if let marker = whole.range(of: " <unfinished ...>", options: .backwards) {
                unfinished[pid] = (String(whole[..<marker.lowerBound]), start)
                continue
            }
            if let call = parseCall(whole, pid: pid, start: start, end: number) { calls.append(call) }
        }
        return calls
    }

    /// The elements of a bracketed or braced list as strace prints it (`[{...}, {...}]`, `{iov_base="...",
    /// iov_len=3}`), split at top-level commas; nil when `text` is not one.
    static func elements(_ text: String) -> [String]? {
        guard let first = text.first, first == "[" || first == "{", let last = text.last, last == "]" || last == "}"
        else { return nil }
        return parseCall("l(" + text.dropFirst().dropLast() + ") = 0", pid: 0, start: 0, end: 0)?.arguments
    }

    /// `name(arg, arg, ...) = result`, splitting arguments at top-level commas (not inside quotes or `<>`).
    private static func parseCall(_ text: String, pid: Int, start: Int, end: Int) -> TracedCall? {
        guard let open = text.firstIndex(of: "(") else { return nil }
        let name = String(text[..<open])
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { return nil }
        var arguments: [String] = []
        var current = ""
        var depth = 0
        var inString = false
        var escaped = false
        var index = text.index(after: open)
        while index < text.endIndex {
            let character = text[index]
            index = text.index(after: index)
            if inString {
                current.append(character)
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inString = false
                }
                continue
            }
            switch character {
            case "\"": inString = true
            case "(", "[", "{", "<": depth += 1
            case "]", "}", ">": depth -= 1
            case ")" where depth == 0:
                if !current.isEmpty || !arguments.isEmpty {
                    arguments.append(current.trimmingCharacters(in: .whitespaces))
                }
                let rest = text[index...].trimmingCharacters(in: .whitespaces)
                guard rest.hasPrefix("=") else { return nil }
                let result = rest.dropFirst().trimmingCharacters(in: .whitespaces)
                return TracedCall(
                    pid: pid, name: name, arguments: arguments, result: result, start: start, end: end)
            case ")": depth -= 1
            case "," where depth == 0:
                arguments.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
                continue
            default: break
            }
            current.append(character)
        }
        return nil
    }
}

// MARK: - What the calls did to the files

/// The file operations of one run, by path, as strace saw them.
struct FileEvents {
    struct Write { var start: Int; var end: Int; var offset: Int; var bytes: [UInt8] }
    struct Rename { var call: TracedCall; var from: String; var to: String }

    private(set) var creations: [String: [TracedCall]] = [:]
    private(set) var writes: [String: [Write]] = [:]
    private(set) var syncs: [String: [TracedCall]] = [:]
    private(set) var renames: [Rename] = []
    private(set) var cutStrings = 0

    init(_ calls: [TracedCall]) {
        for call in calls where call.succeeded {
            switch call.name {
            case "openat":
                guard call.arguments.count >= 3, call.arguments[2].contains("O_CREAT"),
                      call.arguments[2].contains("O_EXCL"), let path = TracedCall.descriptorPath(call.result)
                else { continue }
                creations[path, default: []].append(call)
            case "pwrite64":
                guard call.arguments.count == 4, let path = TracedCall.descriptorPath(call.arguments[0]),
                      let string = TracedCall.string(call.arguments[1]), let offset = Int(call.arguments[3]),
                      let count = Int(call.result.prefix { $0.isNumber })
                else { continue }
                if string.cut { cutStrings += 1 }
                writes[path, default: []].append(
                    Write(start: call.start, end: call.end, offset: offset, bytes: Array(string.bytes.prefix(count))))
            case "pwritev", "pwritev2":
                // `pwritev(fd, [{iov_base="...", iov_len=N}, ...], COUNT, OFFSET) = WRITTEN`: the pieces joined.
                guard call.arguments.count >= 4, let path = TracedCall.descriptorPath(call.arguments[0]),
                      let vectors = StraceLog.elements(call.arguments[1]), let offset = Int(call.arguments[3]),
                      let count = Int(call.result.prefix { $0.isNumber })
                else { continue }
                var joined: [UInt8] = []
                for vector in vectors {
                    guard let base = StraceLog.elements(vector)?.first(where: { $0.hasPrefix("iov_base=") }),
                          let string = TracedCall.string(String(base.dropFirst("iov_base=".count)))
                    else { continue }
                    if string.cut { cutStrings += 1 }
                    joined += string.bytes
                }
                writes[path, default: []].append(
                    Write(start: call.start, end: call.end, offset: offset, bytes: Array(joined.prefix(count))))
            case "fsync", "fdatasync":
                guard let path = call.arguments.first.flatMap(TracedCall.descriptorPath) else { continue }
                syncs[path, default: []].append(call)
            case "rename", "renameat", "renameat2":
                let paths = Self.renamePaths(call)
                if let paths { renames.append(Rename(call: call, from: paths.from, to: paths.to)) }
            default: continue
            }
        }
    }

    /// `rename(old, new)`, or `renameat[2](olddir, old, newdir, new[, flags])` with relative names joined to the
    /// directories strace shows.
    private static func renamePaths(_ call: TracedCall) -> (from: String, to: String)? {
        func path(_ argument: String, in directory: String?) -> String? {
            guard let name = TracedCall.string(argument).map({ String(decoding: $0.bytes, as: UTF8.self) }) else {
                return nil
            }
            if name.hasPrefix("/") { return name }
            return directory.map { $0 + "/" + name }
        }
        let arguments = call.arguments
        if call.name == "rename", arguments.count == 2 {
            guard let from = path(arguments[0], in: nil), let to = path(arguments[1], in: nil) else { return nil }
            return (from, to)
        }
        guard arguments.count >= 4,
              let from = path(arguments[1], in: TracedCall.descriptorPath(arguments[0])),
              let to = path(arguments[3], in: TracedCall.descriptorPath(arguments[2]))
        else { return nil }
        return (from, to)
    }

    /// Where the newest version of `path` begins before line `line`: the end of its last creation or of the last
    /// rename onto it (`-1`: none seen), and that rename, whose file brought its content and durability along.
    func origin(of path: String, before line: Int) -> (since: Int, renamed: Rename?) {
        let created = creations[path, default: []].last { $0.end < line }?.end ?? -1
        guard let renamed = renames.last(where: { $0.to == path && $0.call.end < line }), renamed.call.end > created
        else { return (created, nil) }
        return (renamed.call.end, renamed)
    }

    /// The bytes of `path` that writes which returned before line `line` put there (since its last creation, on
    /// top of what a rename onto it brought).
    func content(of path: String, before line: Int) -> [UInt8] {
        let (since, renamed) = origin(of: path, before: line)
        var bytes = renamed.map { self.content(of: $0.from, before: $0.call.start) } ?? []
        for write in writes[path, default: []] where write.start > since && write.end < line {
            if bytes.count < write.offset + write.bytes.count {
                bytes += [UInt8](repeating: 0, count: write.offset + write.bytes.count - bytes.count)
            }
            bytes.replaceSubrange(write.offset..<(write.offset + write.bytes.count), with: write.bytes)
        }
        return bytes
    }

    /// How many leading bytes of `path` an fsync that returned before line `line` made durable: the extent of the
    /// writes that had returned before that fsync began (a file renamed onto `path` brings what was durable of it).
    func durableLength(of path: String, before line: Int) -> Int {
        let (since, renamed) = origin(of: path, before: line)
        var durable = renamed.map { self.durableLength(of: $0.from, before: $0.call.start) } ?? 0
        for sync in syncs[path, default: []] where sync.start > since && sync.end < line {
            let covered = writes[path, default: []].filter { $0.start > since && $0.end < sync.start }
            durable = max(durable, covered.map { $0.offset + $0.bytes.count }.max() ?? 0)
        }
        return durable
    }

    /// The first fsync of `path` that began after line `after` and returned before line `before`.
    func sync(of path: String, after: Int, before: Int) -> TracedCall? {
        syncs[path, default: []].first { $0.start > after && $0.end < before }
    }
}
