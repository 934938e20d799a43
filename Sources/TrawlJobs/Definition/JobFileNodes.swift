import Foundation
import Trawl
import TrawlJSON
import Yams

/// Typed access to YAML nodes, with errors that point at the node.
extension JobFileReader {
    typealias Entry = (key: Node, value: Node)

    /// The entries of a mapping by key, in order; with `allowed`, any other key is an error.
    func mapping(_ node: Node, _ field: String, allowed: [String]?) throws(JobFileError) -> OrderedEntries {
        guard case .mapping(let mapping) = node else {
            throw error(node, field.isEmpty ? nil : field, "expected a mapping, found \(kind(node))")
        }
        var entries = OrderedEntries()
        for (key, value) in mapping {
            guard case .scalar(let scalar) = key else {
                throw error(key, field.isEmpty ? nil : field, "keys must be strings")
            }
            let name = scalar.string
            if let allowed, !allowed.contains(name) {
                throw error(
                    key, field.isEmpty ? name : "\(field).\(name)", "unknown key '\(name)'",
                    hint: "allowed here: \(allowed.joined(separator: ", "))")
            }
            entries.append(name, (key, value))
        }
        return entries
    }

    func sequence(_ node: Node, _ field: String) throws(JobFileError) -> [Node] {
        guard case .sequence(let sequence) = node else {
            throw error(node, field, "expected a list, found \(kind(node))")
        }
        return Array(sequence)
    }

    func string(_ node: Node, _ field: String) throws(JobFileError) -> String {
        guard case .scalar(let scalar) = node, node.tagName != .null else {
            throw error(node, field, "expected a string, found \(kind(node))")
        }
        return scalar.string
    }

    func int(_ node: Node, _ field: String, minimum: Int) throws(JobFileError) -> Int {
        guard node.tagName == .int, let value = node.int else {
            throw error(node, field, "expected an integer, found \(kind(node))")
        }
        guard value >= minimum else { throw error(node, field, "must be at least \(minimum), not \(value)") }
        return value
    }

    func number(_ node: Node, _ field: String) throws(JobFileError) -> Double {
        let value: Double?
        switch node.tagName {
        case .int: value = node.int.map(Double.init)
        case .float: value = node.float
        default: value = nil
        }
        guard let value, value.isFinite else { throw error(node, field, "expected a number, found \(kind(node))") }
        return value
    }

    func seconds(_ node: Node, _ field: String, positive: Bool) throws(JobFileError) -> Duration {
        let value = try number(node, field)
        guard positive ? value > 0 : value >= 0 else {
            throw error(node, field, "must be \(positive ? "above" : "at least") 0, not \(value)")
        }
        // Past this the milliseconds would not fit an Int64 (1e300 trapped).
        guard value <= Duration.longestBoundedSeconds else {
            throw error(node, field, "must be at most \(Int(Duration.longestBoundedSeconds)) seconds, not \(value)")
        }
        return .milliseconds(Int64((value * 1000).rounded()))
    }

    func keyPath(_ node: Node, _ field: String) throws(JobFileError) -> JSONKeyPath {
        let text = try string(node, field)
        do {
            return try JSONKeyPath.validated(text)
        } catch {
            throw self.error(node, field, error.message, hint: error.hint, code: error.code)
        }
    }

    func kind(_ node: Node) -> String {
        switch node {
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .alias: return "an alias"
        case .scalar(let scalar):
            switch node.tagName {
            case .null: return "nothing"
            case .int: return "the integer \(scalar.string)"
            case .float: return "the number \(scalar.string)"
            case .bool: return "the boolean \(scalar.string)"
            default: return "the string '\(scalar.string)'"
            }
        }
    }

    func error(
        _ node: Node?, _ field: String?, _ message: String, hint: String? = nil, code: JobSpecError.Code = .invalid
    ) -> JobFileError {
        let mark = node?.mark
        return JobFileError(
            file: file, line: mark?.line, column: mark?.column, field: field, message: message, hint: hint, code: code)
    }

    static func syntaxError(_ error: YamlError, file: String) -> JobFileError {
        switch error {
        case .scanner(let context, let problem, let mark, _),
            .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            var message = "invalid YAML: \(problem)"
            if let context { message += " (\(context.text) at line \(context.mark.line))" }
            return JobFileError(
                file: file, line: mark.line, column: mark.column, message: message,
                hint: "check indentation, quotes and brackets; JSON is accepted too")
        case .duplicatedKeysInMapping(let duplicates, let context):
            let keys = duplicates.map { "'\($0)'" }.joined(separator: ", ")
            return JobFileError(
                file: file, line: context.mark.line, column: context.mark.column,
                message: "duplicate key \(keys) in a mapping", hint: "give each key once")
        case .reader(let problem, _, _, _):
            return JobFileError(file: file, message: "cannot read the job file: \(problem)")
        default:
            return JobFileError(file: file, message: "invalid YAML: \(error)")
        }
    }
}

/// Mapping entries by key, in file order.
struct OrderedEntries: Sequence {
    private var ordered: [(String, JobFileReader.Entry)] = []
    private var positions: [String: Int] = [:]

    mutating func append(_ key: String, _ entry: JobFileReader.Entry) {
        if let position = positions[key] {
            ordered[position].1 = entry
        } else {
            positions[key] = ordered.count
            ordered.append((key, entry))
        }
    }

    subscript(key: String) -> JobFileReader.Entry? { positions[key].map { ordered[$0].1 } }

    func makeIterator() -> IndexingIterator<[(String, JobFileReader.Entry)]> { ordered.makeIterator() }
}

extension Node {
    /// The resolved tag (`str`, `int`, `float`, `bool`, `null`, …).
    var tagName: Tag.Name { Tag.Name(rawValue: tag.description) }
}
