import Foundation
import Trawl
import TrawlJSON
import Yams

extension JobFileReader {
    static let graphQLKeys = ["query", "variables", "connection", "items", "cursor_variable"]

    /// A source's `graphql:` mapping.
    ///
    /// ```yaml
    /// graphql:
    ///   query: "query($first: Int, $after: String) { items(first: $first, after: $after) { nodes { id } pageInfo { hasNextPage endCursor } } }"
    ///   variables: {first: 50}
    ///   connection: data.items
    /// ```
    func graphQL(_ node: Node, _ field: String) throws(JobFileError) -> GraphQLSource {
        let fields = try mapping(node, field, allowed: Self.graphQLKeys)
        guard let queryNode = fields["query"]?.value else {
            throw error(node, field, "query is missing", hint: "add query: with the GraphQL query text")
        }
        guard let connectionNode = fields["connection"]?.value else {
            throw error(
                node, field, "connection is missing",
                hint: "add connection: with the key path of the Relay connection, as in data.repository.issues")
        }
        let query = try string(queryNode, "\(field).query")
        let connection = try keyPath(connectionNode, "\(field).connection")
        var variables: [String: JSONValue] = [:]
        if let variablesNode = fields["variables"]?.value {
            for (name, entry) in try mapping(variablesNode, "\(field).variables", allowed: nil) {
                variables[name] = try json(entry.value, "\(field).variables.\(name)", depth: 0)
            }
        }
        let items = try fields["items"].map { entry throws(JobFileError) in try keyPath(entry.value, "\(field).items") }
        let cursorVariable = try fields["cursor_variable"].map { entry throws(JobFileError) in
            try string(entry.value, "\(field).cursor_variable")
        }
        do {
            return try GraphQLSource(
                query: query, variables: variables, connection: connection, items: items,
                cursorVariable: cursorVariable ?? "after")
        } catch {
            let key = error.field.map { String($0.dropFirst("graphql.".count)) }
            let at = key.flatMap { fields[$0]?.value } ?? node
            throw self.error(at, key.map { "\(field).\($0)" } ?? field, error.message, hint: error.hint)
        }
    }

    /// A YAML value as JSON (variables), at most 32 levels deep.
    func json(_ node: Node, _ field: String, depth: Int) throws(JobFileError) -> JSONValue {
        guard depth < 32 else { throw error(node, field, "nested more than 32 levels deep") }
        switch node {
        case .mapping:
            var members: [String: JSONValue] = [:]
            for (name, entry) in try mapping(node, field, allowed: nil) {
                members[name] = try json(entry.value, "\(field).\(name)", depth: depth + 1)
            }
            return .object(members)
        case .sequence(let values):
            var elements: [JSONValue] = []
            for (index, value) in values.enumerated() {
                elements.append(try json(value, "\(field)[\(index)]", depth: depth + 1))
            }
            return .array(elements)
        case .scalar(let scalar):
            switch node.tagName {
            case .null: return .null
            case .bool: return .bool(node.bool ?? false)
            case .int: return node.int.map { .number(String($0)) } ?? .string(scalar.string)
            case .float:
                guard let value = node.float, value.isFinite else { return .string(scalar.string) }
                return .number(String(value))
            default: return .string(scalar.string)
            }
        default:
            throw error(node, field, "expected a value, found \(kind(node))")
        }
    }

    /// A source paged in its body (`paginate: {…, in: body}`) needs a JSON object body: anything else could never
    /// carry the position, so it is refused when the job is read (bad usage, like a header that cannot be sent).
    func checkBodyPagination(_ source: JobSource, _ fields: OrderedEntries, _ node: Node, _ field: String)
        throws(JobFileError)
    {
        guard source.pagination.inBody else { return }
        let bytes = Array((source.body ?? "").utf8)
        if case .object? = try? JSONItemDecoder().decode(JSONValue.self, from: bytes) { return }
        throw error(
            fields["body"]?.value ?? node, "\(field).body",
            source.body == nil
                ? "paginate in: body needs a body, and the source has none"
                : "paginate in: body sets the position in the body, which is not a JSON object",
            hint: "give a JSON object body, as in body: '{\"page\": {\"size\": 100}}', or page in the query",
            code: .neverSendable)
    }
}
