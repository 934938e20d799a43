/// The tags of the compact event encoding that elements are recorded in for decoding.
///
/// Layout: a tag byte; numbers and strings follow it with a `UInt32` byte length and the bytes
/// (numbers as written in the document, strings unescaped); arrays and objects follow it with a
/// `UInt32` body size and a `UInt32` count (elements or keys), then their body, in which each
/// object key is a `UInt32` length and the key bytes, followed by its value.
enum EventTag: UInt8 {
    case null = 0, `false`, `true`, number, string, object, array

    static let containerHeaderSize = 9
}

extension ParseState {
    // MARK: - Compact JSON

    @inline(__always)
    mutating func writeJSON(_ literal: StaticString) {
        if needsComma { element.append(UInt8(ascii: ",")) }
        element.append(literal.utf8Start, literal.utf8CodeUnitCount)
        needsComma = true
    }

    /// Writes a quoted string. Bytes yajl points at inside the input have no escapes (it decodes
    /// those into a buffer of its own) and are copied as they are.
    @inline(__always)
    mutating func writeJSONString(_ text: UnsafeRawPointer, _ length: Int) {
        let address = UInt(bitPattern: text)
        if address >= inputStart && address &+ UInt(length) <= inputEnd {
            let out = element.reserve(length + 2)
            out.storeBytes(of: UInt8(ascii: "\""), as: UInt8.self)
            (out + 1).copyMemory(from: text, byteCount: length)
            (out + 1 + length).storeBytes(of: UInt8(ascii: "\""), as: UInt8.self)
            element.commit(length + 2)
        } else {
            JSONEscaping.appendQuoted(text, length, to: &element)
        }
    }

    // MARK: - Events

    @inline(__always)
    static func writeEvent(_ tag: EventTag, _ text: UnsafeRawPointer, _ length: Int, into buffer: inout ByteBuffer) {
        let out = buffer.reserve(5 + length)
        out.storeBytes(of: tag.rawValue, as: UInt8.self)
        out.storeBytes(of: UInt32(truncatingIfNeeded: length), toByteOffset: 1, as: UInt32.self)
        (out + 5).copyMemory(from: text, byteCount: length)
        buffer.commit(5 + length)
    }

    @inline(__always)
    static func writeContainerHeader(_ isArray: Bool, into buffer: inout ByteBuffer) {
        let out = buffer.reserve(EventTag.containerHeaderSize)
        out.storeBytes(of: isArray ? EventTag.array.rawValue : EventTag.object.rawValue, as: UInt8.self)
        out.storeBytes(of: UInt64(0), toByteOffset: 1, as: UInt64.self)
        buffer.commit(EventTag.containerHeaderSize)
    }

    @inline(__always)
    static func patchContainerHeader(
        at offset: Int, count: Int, mayRepeatKeys: Bool = true, in buffer: inout ByteBuffer
    ) {
        let size = buffer.count - offset - EventTag.containerHeaderSize
        buffer.storeUInt32(UInt32(truncatingIfNeeded: size), at: offset + 1)
        let flag: UInt32 = mayRepeatKeys ? 0x8000_0000 : 0
        buffer.storeUInt32(UInt32(truncatingIfNeeded: count) | flag, at: offset + 5)
    }

    /// Whether the object recorded at `offset` (still open) already has the key: the exact check
    /// behind a hit in its key filter. Its earlier values are complete, so they can be skipped.
    func recordedKey(_ text: UnsafeRawPointer, _ length: Int, in offset: Int) -> Bool {
        Self.hasKey(text, length, inObjectAt: offset, of: element)
    }

    /// Whether the open object whose header is at `offset` in `events` already has the key (the fast lane
    /// records objects the same way).
    static func hasKey(
        _ text: UnsafeRawPointer, _ length: Int, inObjectAt offset: Int, of events: ByteBuffer
    ) -> Bool {
        guard let base = events.base else { return false }
        let reader = EventReader(UnsafeRawBufferPointer(start: base, count: events.count))
        var position = offset + EventTag.containerHeaderSize
        while position < events.count {
            let keyLength = reader.uint32(at: position)
            if keyLength == length && memoryEqual(base + position + 4, text, length) { return true }
            let value = position + 4 + keyLength
            guard value < events.count else { return false }
            position = reader.end(of: value)
        }
        return false
    }

    /// One bit of a 64-bit filter for the key, to tell objects whose keys are all distinct.
    @inline(__always)
    static func keyBit(_ text: UnsafeRawPointer, _ length: Int) -> UInt64 {
        guard length > 0 else { return 1 }
        let first = UInt64(text.load(as: UInt8.self))
        let last = UInt64(text.load(fromByteOffset: length - 1, as: UInt8.self))
        let middle = UInt64(text.load(fromByteOffset: length / 2, as: UInt8.self))
        let hash = (UInt64(length) &* 0x9E37_79B9_7F4A_7C15) ^ (first &* 0xFF51_AFD7_ED55_8CCD)
            ^ (last &* 0xC4CE_B9FE_1A85_EC53) ^ (middle << 17)
        return 1 << (hash >> 58)
    }

    // MARK: - Handing out elements

    /// The bytes after each completed element: a line feed in the compact JSON form.
    var separatorLength: Int { form == .json ? 1 : 0 }

    /// Copies the elements completed since the last call into one array, and returns it with the
    /// end of each element in it (each is followed by `separatorLength` bytes); the element still
    /// being recorded moves to the buffer's front.
    mutating func takeCompleted() -> (bytes: [UInt8], ends: [Int]) {
        guard let last = completedEnds.last else { return ([], []) }
        let taken = last + separatorLength
        let bytes = element.copyBytes(0..<taken)
        let ends = completedEnds
        // One new buffer of the same capacity (the old one is shared with `ends`), not a regrowth from empty.
        completedEnds.removeAll(keepingCapacity: true)
        dropCompleted(taken)
        return (bytes, ends)
    }

    /// Appends the compact JSON elements completed since the last call to `lines`, each followed by
    /// a line feed, in one copy. Returns how many there were.
    mutating func takeLines(into lines: inout [UInt8]) -> Int {
        guard let last = completedEnds.last else { return 0 }
        let taken = last + separatorLength
        lines.append(contentsOf: element.bytes(0..<taken))
        let count = completedEnds.count
        completedEnds.removeAll(keepingCapacity: true)
        dropCompleted(taken)
        return count
    }

    private mutating func dropCompleted(_ taken: Int) {
        element.removeFirst(taken)
        if elementDepth >= 0 { rebaseElement(by: taken) }
    }

    /// The size of the element being recorded so far.
    var openElementBytes: Int { elementDepth >= 0 ? element.count - elementStart : 0 }

    // MARK: - Where the parser is

    /// The position reached, as a key path (`items.3.name`), or `$` at the top level.
    func currentPath() -> String {
        var parts: [String] = []
        var level = 1
        while level <= depth {
            let frame = frames[level]
            if frame.count > 0 {
                if frame.isArray {
                    parts.append(String(frame.count - 1))
                } else {
                    let length = Int(frame.keyLength)
                    let stored = UnsafeBufferPointer(
                        start: UnsafePointer(bitPattern: frame.keyAddress)
                            ?? UnsafePointer(keys + level * Self.keySlot),
                        count: min(length, Self.keySlot))
                    var key = String(decoding: stored, as: UTF8.self)
                    if length > Self.keySlot { key += "…" }
                    parts.append(key.replacingDots())
                }
            }
            level += 1
        }
        if skipping { parts.append("…") }
        if parts.count > 12 { parts = parts.prefix(5) + ["…"] + parts.suffix(5) }
        return parts.isEmpty ? "$" : parts.joined(separator: ".")
    }
}

private extension String {
    func replacingDots() -> String {
        guard contains(".") || contains("\\") else { return self }
        var escaped = ""
        for character in self {
            if character == "." || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}

/// JSON string escaping for re-emission.
enum JSONEscaping {
    static func appendQuoted(_ text: UnsafeRawPointer, _ length: Int, to out: inout ByteBuffer) {
        out.append(UInt8(ascii: "\""))
        var runStart = 0
        var i = 0
        while i < length {
            i = skipPlain(text, from: i, count: length)
            guard i < length else { break }
            let byte = text.load(fromByteOffset: i, as: UInt8.self)
            if byte == 0x22 || byte == 0x5C || byte < 0x20 {
                out.append(text + runStart, i - runStart)
                appendEscape(byte, to: &out)
                runStart = i + 1
            }
            i += 1
        }
        out.append(text + runStart, length - runStart)
        out.append(UInt8(ascii: "\""))
    }

    /// Skips 8-byte words with no quote, backslash or control character.
    @inline(__always)
    private static func skipPlain(_ text: UnsafeRawPointer, from start: Int, count: Int) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101
        var i = start
        while i + 8 <= count {
            let word = UInt64(littleEndian: text.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            let quotes = word ^ (ones &* 0x22)
            let backslashes = word ^ (ones &* 0x5C)
            let special = ((word &- ones &* 0x20) & ~word) | ((quotes &- ones) & ~quotes)
                | ((backslashes &- ones) & ~backslashes)
            if special & (ones &* 0x80) != 0 { break }
            i += 8
        }
        return i
    }

    private static func appendEscape(_ byte: UInt8, to out: inout ByteBuffer) {
        out.append(UInt8(ascii: "\\"))
        switch byte {
        case 0x22: out.append(0x22)
        case 0x5C: out.append(0x5C)
        case 0x08: out.append(UInt8(ascii: "b"))
        case 0x0C: out.append(UInt8(ascii: "f"))
        case 0x0A: out.append(UInt8(ascii: "n"))
        case 0x0D: out.append(UInt8(ascii: "r"))
        case 0x09: out.append(UInt8(ascii: "t"))
        default:
            let hex = Array("0123456789abcdef".utf8)
            out.append(UInt8(ascii: "u"))
            out.append(UInt8(ascii: "0"))
            out.append(UInt8(ascii: "0"))
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 0xF)])
        }
    }
}
