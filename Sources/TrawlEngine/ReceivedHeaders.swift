/// Response header fields as the bytes libcurl delivered, with the ranges of each name and value.
/// Filled by one transfer on the loop thread, then only read (shared by the `HTTPHeaders` values).
final class ReceivedHeaders: @unchecked Sendable {
    private struct Field {
        var nameStart: Int32, nameEnd: Int32, valueStart: Int32, valueEnd: Int32
    }

    private var bytes: [UInt8] = []
    private var fields: [Field] = []

    init() {
        bytes.reserveCapacity(512)
        fields.reserveCapacity(12)
    }

    var count: Int { fields.count }

    /// Adds a field from a header line (without CR LF): name before `colon`, value after, trimmed.
    func append(line: UnsafeRawBufferPointer, colon: Int) {
        let name = Self.trimmed(line, 0, colon)
        let value = Self.trimmed(line, colon + 1, line.count)
        let base = bytes.count
        bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: line[name]))
        bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: line[value]))
        let nameEnd = base + name.count
        fields.append(Field(nameStart: Int32(base), nameEnd: Int32(nameEnd), valueStart: Int32(nameEnd),
                            valueEnd: Int32(nameEnd + value.count)))
    }

    /// An obs-fold continuation line: appended to the last value after one space.
    func appendContinuation(_ line: UnsafeRawBufferPointer) {
        guard var last = fields.popLast() else { return }
        let value = Array(bytes[Int(last.valueStart)..<Int(last.valueEnd)])
        let start = bytes.count
        bytes.append(contentsOf: value)
        bytes.append(32)
        bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: line[Self.trimmed(line, 0, line.count)]))
        last.valueStart = Int32(start)
        last.valueEnd = Int32(bytes.count)
        fields.append(last)
    }

    func name(at index: Int) -> String { string(fields[index].nameStart, fields[index].nameEnd) }
    func value(at index: Int) -> String { string(fields[index].valueStart, fields[index].valueEnd) }

    func firstIndex(of name: String) -> Int? {
        fields.indices.first { matches(name, $0) }
    }

    func indices(of name: String) -> [Int] {
        fields.indices.filter { matches(name, $0) }
    }

    private func matches(_ name: String, _ index: Int) -> Bool {
        let field = fields[index]
        guard name.utf8.count == Int(field.nameEnd - field.nameStart) else { return false }
        var position = Int(field.nameStart)
        for byte in name.utf8 {
            let stored = bytes[position]
            if stored != byte, stored | 0x20 != byte | 0x20 || !((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A) {
                return false
            }
            position += 1
        }
        return true
    }

    private func string(_ start: Int32, _ end: Int32) -> String {
        bytes.withUnsafeBufferPointer {
            String(decoding: UnsafeBufferPointer(rebasing: $0[Int(start)..<Int(end)]), as: UTF8.self)
        }
    }

    private static func trimmed(_ line: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> Range<Int> {
        var start = start, end = end
        while start < end, line[start] == 32 || line[start] == 9 { start += 1 }
        while end > start, line[end - 1] == 32 || line[end - 1] == 9 { end -= 1 }
        return start..<end
    }
}
