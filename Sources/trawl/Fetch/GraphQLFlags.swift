import ArgumentParser
import Foundation
import Trawl
import TrawlJSON
import TrawlJobs

/// `trawl fetch URL --graphql-query …`: a one-off GraphQL source (a job file's `graphql:`).
struct GraphQLFlags: ParsableArguments {
    @Option(
        name: .customLong("graphql-query"),
        help: "The GraphQL query, or @FILE to read it from a file: sent as POST JSON, its connection walked.")
    var query: String?

    @Option(
        name: .customLong("graphql-connection"),
        help: "Key path of the Relay connection in the answer, e.g. data.repository.issues (with --graphql-query).")
    var connection: String?

    @Option(name: .customLong("graphql-variables"), help: "The query's variables as a JSON object, e.g. '{\"first\":50}'.")
    var variables: String?

    @Option(
        name: .customLong("graphql-items"),
        help: "Key path of the items (default: the connection's nodes, or edges[].node when the query asks edges).")
    var items: String?

    @Option(name: .customLong("graphql-cursor-variable"), help: "The variable that takes the cursor (default after).")
    var cursorVariable: String?

    var isGiven: Bool { query != nil }

    func validate() throws {
        let others = [("--graphql-connection", connection), ("--graphql-variables", variables),
            ("--graphql-items", items), ("--graphql-cursor-variable", cursorVariable)]
        if query == nil, let (flag, _) = others.first(where: { $0.1 != nil }) {
            throw ValidationError("\(flag) needs --graphql-query")
        }
        if query != nil, connection == nil {
            throw ValidationError(
                "--graphql-query needs --graphql-connection, the key path of the Relay connection (e.g. data.repository.issues)")
        }
    }

    /// The source these flags describe; `nil` without `--graphql-query`.
    func source() throws -> GraphQLSource? {
        guard var text = query, let connection else { return nil }
        if text.hasPrefix("@") {
            let path = String(text.dropFirst())
            guard let data = FileManager.default.contents(atPath: path), data.count <= 1 << 20 else {
                throw ValidationError("--graphql-query @\(path): cannot read the file (or it is over 1 MiB)")
            }
            text = String(decoding: data, as: UTF8.self)
        }
        var values: [String: JSONValue] = [:]
        if let variables {
            guard case .object(let members)? = try? JSONItemDecoder().decode(JSONValue.self, from: Array(variables.utf8))
            else { throw ValidationError("--graphql-variables is not a JSON object: give '{\"NAME\": VALUE, ...}'") }
            values = members
        }
        do {
            return try GraphQLSource(
                query: text, variables: values, connection: try JSONKeyPath.validated(connection),
                items: try items.map { text throws(JobSpecError) in try JSONKeyPath.validated(text) },
                cursorVariable: cursorVariable ?? "after")
        } catch {
            let flag = error.field.map { "--" + $0.replacingOccurrences(of: ".", with: "-").replacingOccurrences(of: "_", with: "-") }
            throw ValidationError("\(flag ?? "--graphql-query"): \(error.message)" + (error.hint.map { " (\($0))" } ?? ""))
        }
    }
}
