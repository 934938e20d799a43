import Foundation
import Trawl
import TrawlJSON

/// A GraphQL source (`graphql:` in a job file, `--graphql-query` on the command line): the query and variables
/// sent as `POST` JSON, and the Relay connection walked.
///
/// ```swift
/// let source = try GraphQLSource(
///     query: "query($after: String) { items(first: 50, after: $after) { nodes { id } pageInfo { hasNextPage endCursor } } }",
///     variables: [:], connection: "data.items")
/// source.body        // {"query":"…","variables":{}}
/// source.items       // data.items.nodes
/// ```
public struct GraphQLSource: Sendable, Hashable {
    public var query: String
    public var variables: [String: JSONValue]
    public var connection: JSONKeyPath
    /// Where the items are; `nil`: the connection's `nodes`, or its `edges` (each item the edge's `node`), as the
    /// query asks.
    public var itemsPath: JSONKeyPath?
    public var cursorVariable: String

    public init(
        query: String, variables: [String: JSONValue] = [:], connection: JSONKeyPath, items: JSONKeyPath? = nil,
        cursorVariable: String = "after"
    ) throws(JobSpecError) {
        guard !query.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw JobSpecError(field: "graphql.query", "the query is empty", hint: "give the query text")
        }
        guard !connection.components.isEmpty else {
            throw JobSpecError(
                field: "graphql.connection", "the connection path is empty",
                hint: "name the Relay connection, as in data.repository.issues")
        }
        guard Self.isName(cursorVariable) else {
            throw JobSpecError(
                field: "graphql.cursor_variable", "'\(cursorVariable)' is not a GraphQL variable name",
                hint: "use letters, digits and _, starting with a letter or _ (without the $)")
        }
        self.query = query
        self.variables = variables
        self.connection = connection
        self.itemsPath = items
        self.cursorVariable = cursorVariable
        if items == nil, !(query.contains("nodes") || query.contains("edges")) {
            throw JobSpecError(
                field: "graphql.query", "the query asks for neither nodes nor edges of the connection",
                hint: "ask for nodes { … } or edges { node { … } }, or give graphql.items")
        }
    }

    /// The request body: `{"query": …, "variables": {…}}`.
    public var body: String {
        String(decoding: JSONValue.object(["query": .string(query), "variables": .object(variables)]).json,
            as: UTF8.self)
    }

    public var pagination: PaginationStyle { .graphQL(connection: connection, cursorVariable: cursorVariable) }

    /// The items' key path: the explicit one, else `nodes` when the query asks for them, else `edges`.
    public var items: JSONKeyPath {
        if let itemsPath { return itemsPath }
        return JSONKeyPath(components: connection.components + [.key(usesEdges ? "edges" : "nodes")])
    }

    /// `node` when each element read is an edge whose `node` is the item.
    public var itemMember: String? { itemsPath == nil && usesEdges ? "node" : nil }

    private var usesEdges: Bool { !query.contains("nodes") && query.contains("edges") }

    static func isName(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic)
        else { return false }
        return text.unicodeScalars.allSatisfy { $0 == "_" || ($0.isASCII && $0.properties.isAlphabetic) || ("0"..."9").contains($0) }
    }
}

extension JobSource {
    /// This source made a GraphQL one: `POST` (unless a method was given), the query as its body, the connection
    /// as its pagination and items.
    public mutating func use(_ graphQL: GraphQLSource) {
        if method == .get { method = .post }
        body = graphQL.body
        pagination = graphQL.pagination
        items = graphQL.items
        itemMember = graphQL.itemMember
        if !headers.contains(where: { $0.name.lowercased() == "content-type" }) {
            headers.append(JobHeader(name: "Content-Type", value: "application/json"))
        }
    }
}
