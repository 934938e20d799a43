/// `convertFromSnakeCase`, exactly as `JSONDecoder` applies it.
enum SnakeCase {
    /// Keys without an underscore are left as they are.
    @inline(__always)
    static func hasUnderscore(_ key: UnsafeRawPointer, _ length: Int) -> Bool {
        var i = 0
        while i < length {
            if key.load(fromByteOffset: i, as: UInt8.self) == UInt8(ascii: "_") { return true }
            i += 1
        }
        return false
    }

    /// A quick check on the first byte, which the conversion lowercases unless it is `_`.
    @inline(__always)
    static func mayMatch(_ key: UnsafeRawPointer, _ length: Int, camelCase: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = camelCase.first, length > 0 else { return false }
        let head = key.load(as: UInt8.self)
        return head == UInt8(ascii: "_") || head >= 0x80 || lower(head) == first
    }

    /// Whether converting the ASCII `key` gives `camelCase`, without building the string.
    static func matches(_ key: UnsafeRawPointer, _ length: Int, camelCase: UnsafeBufferPointer<UInt8>) -> Bool {
        let bytes = UnsafeRawBufferPointer(start: key, count: length)
        var first = 0
        while first < length && bytes[first] == UInt8(ascii: "_") { first += 1 }
        guard first < length else {
            return length == camelCase.count && memoryEqual(camelCase.baseAddress, key, length)
        }
        var last = length - 1
        while last > first && bytes[last] == UInt8(ascii: "_") { last -= 1 }
        var inner = 0
        var ascii = true
        for i in first...last {
            if bytes[i] == UInt8(ascii: "_") { inner += 1 }
            if bytes[i] >= 0x80 { ascii = false }
        }
        guard ascii else { return toCamelCase(bytes).utf8.elementsEqual(camelCase) }
        // Unchanged when there is one word; otherwise the inner underscores go.
        guard inner > 0 else { return length == camelCase.count && memoryEqual(camelCase.baseAddress, key, length) }
        guard length - inner == camelCase.count else { return false }
        var out = 0
        for i in 0..<first {
            if camelCase[out] != bytes[i] { return false }
            out += 1
        }
        var wordIndex = 0
        var atWordStart = true
        for i in first...last {
            let byte = bytes[i]
            if byte == UInt8(ascii: "_") {
                if !atWordStart { wordIndex += 1 }
                atWordStart = true
                continue
            }
            let converted = wordIndex > 0 && atWordStart ? upper(byte) : lower(byte)
            atWordStart = false
            if camelCase[out] != converted { return false }
            out += 1
        }
        for i in (last + 1)..<length {
            if camelCase[out] != bytes[i] { return false }
            out += 1
        }
        return true
    }

    private static func lower(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte + 32 : byte
    }

    private static func upper(_ byte: UInt8) -> UInt8 {
        byte >= 0x61 && byte <= 0x7A ? byte - 32 : byte
    }

    static func toCamelCase(_ bytes: UnsafeRawBufferPointer) -> String {
        let key = EventReader.string(bytes)
        guard bytes.contains(UInt8(ascii: "_")) else { return key }
        guard let first = key.firstIndex(where: { $0 != "_" }) else { return key }
        var last = key.index(before: key.endIndex)
        while last > first && key[last] == "_" { key.formIndex(before: &last) }
        let words = key[first...last].split(separator: "_")
        let joined: String
        if words.count == 1 {
            joined = String(key[first...last])
        } else {
            joined = ([words[0].lowercased()] + words.dropFirst().map(capitalized)).joined()
        }
        return String(key[..<first]) + joined + String(key[key.index(after: last)...])
    }

    private static func capitalized(_ word: Substring) -> String {
        guard let head = word.first else { return "" }
        return head.uppercased() + word.dropFirst().lowercased()
    }
}
