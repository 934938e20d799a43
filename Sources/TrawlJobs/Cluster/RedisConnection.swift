import Foundation
import TrawlEngine

/// A RESP2 value (Redis's wire format).
package enum RESPValue: Sendable, Equatable {
    case simple(String)
    case error(String)
    case integer(Int)
    case bulk([UInt8]?)
    case array([RESPValue]?)

    /// The value as text: a simple or bulk string, or an integer's digits.
    package var text: String? {
        switch self {
        case .simple(let text): return text
        case .bulk(let bytes?): return String(decoding: bytes, as: UTF8.self)
        case .integer(let number): return String(number)
        default: return nil
        }
    }
}

/// Reads RESP2 values out of bytes as they arrive; bounded (a store answers with a few short values, so anything
/// big is a wrong peer, not an answer): at most `longestValue` bytes buffered, arrays of at most `longestArray`
/// elements nested at most `deepestNesting` deep, and `mostValues` values in one answer. The parse is a loop over
/// an explicit stack, never a recursion, so no nesting a peer sends can exhaust the thread's stack.
struct RESPReader {
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    static let longestValue = 1 << 20
    static let longestArray = 1024
    static let deepestNesting = 16
    static let mostValues = 4096
    private var buffer: [UInt8] = []
    private var position = 0

    mutating func append(_ bytes: [UInt8]) throws(Malformed) {
        if position > 0 {
            buffer.removeFirst(position)
            position = 0
        }
        buffer += bytes
        guard buffer.count <= Self.longestValue else { throw Malformed(description: "an answer over 1 MiB") }
    }

    /// The next whole value, or `nil` until more bytes arrive.
    mutating func next() throws(Malformed) -> RESPValue? {
        var cursor = position
        guard let value = try parse(&cursor) else { return nil }
        position = cursor
        return value
    }

    private func line(_ cursor: inout Int) -> String? {
        var index = cursor
        while index + 1 < buffer.count {
            if buffer[index] == 13, buffer[index + 1] == 10 {
                let text = String(decoding: buffer[cursor..<index], as: UTF8.self)
                cursor = index + 2
                return text
            }
            index += 1
        }
        return nil
    }

    /// An array being read: the elements so far and how many it has in all.
    private struct Frame {
        var count: Int
        var elements: [RESPValue] = []
    }

    /// One value from `cursor` on (advancing it past the value), or `nil` when the buffer ends inside it.
    private func parse(_ cursor: inout Int) throws(Malformed) -> RESPValue? {
        var stack: [Frame] = []
        var after = cursor
        var values = 0
        while true {
            var value: RESPValue
            guard after < buffer.count else { return nil }
            let kind = buffer[after]
            after += 1
            guard let text = line(&after) else { return nil }
            values += 1
            guard values <= Self.mostValues else {
                throw Malformed(description: "an answer of over \(Self.mostValues) values")
            }
            switch kind {
            case UInt8(ascii: "+"):
                value = .simple(text)
            case UInt8(ascii: "-"):
                value = .error(text)
            case UInt8(ascii: ":"):
                guard let number = Int(text) else { throw Malformed(description: "integer '\(text.prefix(40))'") }
                value = .integer(number)
            case UInt8(ascii: "$"):
                guard let length = Int(text), length >= -1, length <= Self.longestValue else {
                    throw Malformed(description: "bulk length '\(text.prefix(40))'")
                }
                if length == -1 {
                    value = .bulk(nil)
                } else {
                    guard after + length + 2 <= buffer.count else { return nil }
                    value = .bulk(Array(buffer[after..<(after + length)]))
                    after += length + 2
                }
            case UInt8(ascii: "*"):
                guard let count = Int(text), count >= -1, count <= Self.longestArray else {
                    throw Malformed(description: "array length '\(text.prefix(40))'")
                }
                // An empty array counts as a level too: what is refused does not depend on what the array holds.
                guard stack.count < Self.deepestNesting else {
                    throw Malformed(description: "arrays nested over \(Self.deepestNesting) deep")
                }
                if count <= 0 {
                    value = .array(count == -1 ? nil : [])
                } else {
                    stack.append(Frame(count: count))
                    continue
                }
            default:
                throw Malformed(description: "a reply starting with byte \(kind)")
            }
            // A whole value: it completes the arrays it ends, innermost first.
            while var top = stack.popLast() {
                top.elements.append(value)
                if top.elements.count < top.count {
                    stack.append(top)
                    break
                }
                value = .array(top.elements)
            }
            if stack.isEmpty {
                cursor = after
                return value
            }
        }
    }

    /// A command as RESP: an array of bulk strings.
    static func command(_ arguments: [String]) -> [UInt8] {
        var bytes = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            let utf8 = Array(argument.utf8)
            bytes += Array("$\(utf8.count)\r\n".utf8) + utf8 + [13, 10]
        }
        return bytes
    }
}

/// One connection to a Redis server, speaking RESP2 over a `TCPConnection`: small and blocking, used from one
/// queue. A small client of our own rather than hiredis: the store needs four commands (SELECT, EVALSHA, EVAL,
/// PING), and this keeps C out of `TrawlJobs` and adds no system library to build against.
final class RedisConnection {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let connection: TCPConnection
    private var reader = RESPReader()

    init(_ address: RateStoreAddress, timeout: Duration) throws(Failure) {
        do {
            connection = try TCPConnection(host: address.host, port: address.port, timeout: timeout)
        } catch {
            throw Failure(description: error.description)
        }
        if address.database != 0 {
            let answer = try command(["SELECT", String(address.database)])
            if case .error(let message) = answer {
                throw Failure(description: "SELECT \(address.database) failed: \(message)")
            }
        }
    }

    /// Sends one command and reads its answer (a Redis error comes back as `.error`, not thrown).
    func command(_ arguments: [String]) throws(Failure) -> RESPValue {
        do {
            try connection.send(RESPReader.command(arguments))
            while true {
                if let value = try reader.next() { return value }
                try reader.append(connection.receive())
            }
        } catch let failure as TCPConnection.Failure {
            connection.close()
            throw Failure(description: failure.description)
        } catch {
            connection.close()
            throw Failure(description: "the store's answer is not RESP: \(error)")
        }
    }
}
