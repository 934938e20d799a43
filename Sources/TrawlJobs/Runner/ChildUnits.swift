import Foundation
import Synchronization
import Trawl
import TrawlEngine
import TrawlJSON

/// A source with `parent:`, ready to make one unit per parent item (its templates expanded but for the parent
/// values; secrets included: never persist it).
public struct DependentSource: Sendable {
    var sourceIndex: Int
    var name: String
    var parentIndex: Int
    var parentName: String
    var url: JobTemplate
    /// The parent key paths the URL names (`login` for `{users.login}`), in order of first use.
    var keyPaths: [String]
    var method: HTTPMethod
    var headers: HTTPHeaders
    var body: RequestBody?
    var pagination: PaginationStyle
    var items: JSONKeyPath
    var side: [JSONKeyPath]
    var maxItems: Int?
    var maxPages: Int?
    var tls: Client.TLSOptions
    var auth: JobAuth?
    var include: [JSONKeyPath]
    var environment: [String: String]
}

extension Job {
    /// The sources with `parent:`, in job order (`units(environment:)` makes none for them: their units come from
    /// their parent's items as the job runs).
    public func dependents(environment: [String: String]) throws(JobSpecError) -> [DependentSource] {
        try validate()
        var result: [DependentSource] = []
        for (index, source) in sources.enumerated() {
            guard let parent = source.parent, let parentIndex = sources.firstIndex(where: { $0.name == parent }) else {
                continue
            }
            let field = "sources[\(index)]"
            let templates = try source.templates(field: field)
            // Headers and body take no parent value (validated), so this expands only the environment.
            let request = try templates.request(
                method: source.method, parameters: [:], environment: environment, field: field,
                skippingURL: true)
            result.append(DependentSource(
                sourceIndex: index, name: source.name, parentIndex: parentIndex, parentName: parent,
                url: templates.url, keyPaths: source.parentKeyPaths, method: source.method, headers: request.headers,
                body: request.body, pagination: source.pagination, items: source.items, side: source.side,
                maxItems: source.maxItems, maxPages: source.maxPages,
                tls: settings.tls.overlaid(with: source.tls ?? TLSSettings()).options,
                auth: try source.resolvedAuth(settings: settings, environment: environment, field: field),
                include: source.includeFromParent, environment: environment))
        }
        return result
    }
}

extension JobSource.Templates {
    func request(
        method: HTTPMethod, parameters: [String: String], environment: [String: String], field: String,
        skippingURL: Bool
    ) throws(JobSpecError) -> Request {
        var templates = self
        if skippingURL, let empty = try? JobTemplate(parsing: "") { templates.url = empty }
        return try templates.request(method: method, parameters: parameters, environment: environment, field: field)
    }
}

/// What one parent item gives a child unit: the values its URL names and the fields it copies.
struct ChildDescriptor: Codable, Sendable {
    /// Key path to the value's text; `nil` when the item has no scalar there.
    var v: [String: String?]
    /// `include_from_parent` fields, by key path (missing ones are null).
    var p: [String: JSONValue]?

    init(item: JSONValue, source: DependentSource) {
        var values: [String: String?] = [:]
        for path in source.keyPaths { values[path] = ParentValue.text(Self.value(at: JSONKeyPath(path), in: item)) }
        v = values
        if !source.include.isEmpty {
            var fields: [String: JSONValue] = [:]
            for path in source.include { fields[path.description] = Self.value(at: path, in: item) ?? .null }
            p = fields
        }
    }

    static func value(at path: JSONKeyPath, in value: JSONValue) -> JSONValue? {
        var current = value
        for component in path.components {
            switch (current, component) {
            case (.array(let elements), .index(let index)):
                let position = index < 0 ? elements.count + index : index
                guard elements.indices.contains(position) else { return nil }
                current = elements[position]
            case (.object(let members), .key(let key)):
                guard let next = members[key] else { return nil }
                current = next
            case (.object(let members), .index(let index)):
                guard let next = members[String(index)] else { return nil }
                current = next
            default:
                return nil
            }
        }
        return current
    }
}

extension DependentSource {
    /// The child unit for parent unit `parent`'s item number `index` (0-based across the parent unit's pages), or
    /// the reason there is none (a value the URL names is missing).
    func unit(parent: WorkUnit, index: Int, descriptor: ChildDescriptor) -> (WorkUnit, problem: String?) {
        var url = ""
        var problem: String?
        var bindings: [MatrixBinding] = []
        for segment in self.url.segments {
            switch segment {
            case .literal(let text): url += text
            case .environment(let name): url += environment[name] ?? ""
            case .parameter(let name):
                let path = String(name.dropFirst(parentName.count + 1))
                guard let value = descriptor.v[path] ?? nil else {
                    problem = problem ?? "the parent item has no string or number at '\(path)' for {\(name)}"
                    continue
                }
                if !bindings.contains(where: { $0.name == name }) {
                    bindings.append(MatrixBinding(name: name, value: value))
                }
                url += ParentValue.segment(value)
            }
        }
        let id = ([name] + bindings.map { "\($0.name)=\($0.value)" }).joined(separator: " ")
        var unit = WorkUnit(
            sourceIndex: sourceIndex, source: name,
            ordinal: UnitID.child(source: sourceIndex, parent: parent.ordinal, index: index).ordinal,
            parameters: bindings, id: id, request: Request(url: url, method: method, headers: headers, body: body),
            pagination: pagination, items: items, side: side, maxItems: maxItems, maxPages: maxPages, tls: tls)
        unit.auth = auth
        if let fields = descriptor.p {
            var object: [UInt8] = Array(#""_parent":{"#.utf8)
            for (position, path) in include.enumerated() {
                if position > 0 { object.append(UInt8(ascii: ",")) }
                object += JSONValue.string(path.description).json + [UInt8(ascii: ":")]
                object += (fields[path.description] ?? .null).json
            }
            object.append(UInt8(ascii: "}"))
            unit.parentFields = object
        }
        return (unit, problem)
    }
}

extension PageLinesReader {
    /// Item lines with `"_parent":{…}` first in each object (other items as they are).
    static func addingParent(_ fields: [UInt8], to lines: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(lines.count + fields.count * 8)
        for line in lines.split(separator: UInt8(ascii: "\n")) {
            if line.first == UInt8(ascii: "{") {
                out.append(UInt8(ascii: "{"))
                out += fields
                if line.count > 2 { out.append(UInt8(ascii: ",")) }
                out += line.dropFirst()
            } else {
                out += line
            }
            out.append(UInt8(ascii: "\n"))
        }
        return out
    }
}
