import Foundation

/// Why a state file trawl wrote (a checkpoint, the marks) could not be read back, in a few words and a key path,
/// never Foundation's `DecodingError` dump.
enum StateFileProblem {
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func at(_ path: [any CodingKey]) -> String {
            path.isEmpty ? "" : " at " + path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(
                separator: ".")
        }
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty: return "not valid JSON"
        case .dataCorrupted(let context): return "a value that cannot be read\(at(context.codingPath))"
        case .keyNotFound(let key, let context): return "'\(key.stringValue)' is missing\(at(context.codingPath))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "a value of the wrong kind\(at(context.codingPath))"
        @unknown default: return "not what trawl writes"
        }
    }
}
