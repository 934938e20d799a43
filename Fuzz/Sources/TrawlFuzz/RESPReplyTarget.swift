@testable import TrawlJobs

/// `RESPReader` on any bytes a "Redis" may answer: never a crash or a stack overflow (the parse is a loop, nesting
/// at most `deepestNesting`), never more than `longestValue` bytes held, and the same values or the same refusal
/// whether the bytes come at once or in two pieces cut where the input's first byte says.
///
/// Input: byte 0 picks the cut; the rest is the reply stream.
enum RESPReplyTarget {
    enum Outcome: Equatable {
        case values([RESPValue])
        case malformed
    }

    static func run(_ input: [UInt8]) {
        let stream = Array(input.dropFirst())
        let cut = stream.isEmpty ? 0 : Int(input.first ?? 0) % (stream.count + 1)
        let whole = read([stream])
        let pieces = read([Array(stream[..<cut]), Array(stream[cut...])])
        require(whole == pieces, "one chunk gives \(whole), two cut at \(cut) give \(pieces)")
        if case .values(let values) = whole {
            for value in values { require(depth(value) <= RESPReader.deepestNesting, "nested too deep: \(value)") }
        }
    }

    /// Every whole value the chunks hold, read as a connection reads them (after each chunk, until `nil`).
    static func read(_ chunks: [[UInt8]]) -> Outcome {
        var reader = RESPReader()
        var values: [RESPValue] = []
        do {
            for chunk in chunks {
                try reader.append(chunk)
                while let value = try reader.next() { values.append(value) }
            }
        } catch {
            return .malformed
        }
        return .values(values)
    }

    /// Arrays within arrays, counted without recursing (a deep value must not overflow the checker's stack either).
    static func depth(_ value: RESPValue) -> Int {
        var deepest = 0
        var pending: [(RESPValue, Int)] = [(value, 0)]
        while let (next, level) = pending.popLast() {
            guard case .array(let elements?) = next else { continue }
            deepest = max(deepest, level + 1)
            pending += elements.map { ($0, level + 1) }
        }
        return deepest
    }
}
