import Trawl
import TrawlEngine
import TrawlJSON
import Yams

/// Dependent sources: a source whose URLs come from another source's items.
///
/// ```yaml
/// sources:
///   - {name: users, url: "https://api.example.com/users", paginate: link, items: ""}
///   - name: repos
///     parent: users                                   # one unit per item of users
///     url: "https://api.example.com/users/{users.login}/repos"   # any key path of the parent item
///     paginate: link
///     items: ""
///     include_from_parent: [id]                       # each repo gets "_parent": {"id": …}
/// ```
///
/// A parent value is percent-encoded as one path segment (`/`, `?`, `#` and `%` encoded, `.` and `..` as
/// `%2E`), and may only appear after the origin, so hostile parent data cannot reach another path, query or
/// host. A child source takes no matrix; its parent must be a source without a parent (one level).
extension JobSource {
    /// Whether `{name}` names a field of this source's parent item (`{PARENT.path}`).
    func isParentParameter(_ name: String) -> Bool {
        guard let parent else { return false }
        return name.hasPrefix(parent + ".") && name.count > parent.count + 1
    }

    /// The parent key paths the URL names, in order of first use.
    var parentKeyPaths: [String] {
        guard let parent, let template = try? JobTemplate(parsing: url) else { return [] }
        return template.parameters.filter(isParentParameter).map { String($0.dropFirst(parent.count + 1)) }
    }
}

extension Job {
    /// Parents exist, are not the source itself, have no parent of their own (one level), and a child names its
    /// parent only in its URL, after the origin, and has no matrix.
    func validateParents() throws(JobSpecError) {
        let byName = Dictionary(sources.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        for (index, source) in sources.enumerated() {
            let field = "sources[\(index)]"
            guard let parent = source.parent else {
                if !source.includeFromParent.isEmpty {
                    throw JobSpecError(
                        field: "\(field).include_from_parent", "include_from_parent needs a parent:",
                        hint: "add parent: SOURCE, or remove include_from_parent")
                }
                continue
            }
            guard let parentIndex = byName[parent] else {
                throw JobSpecError(
                    code: .parents, field: "\(field).parent", "'\(parent)' names no source",
                    hint: "sources here: \(sources.map(\.name).joined(separator: ", "))")
            }
            guard index < UnitID.childSources else {
                // A child unit's id holds its source's position in 10 bits: past it, two sources' units collide.
                throw JobSpecError(
                    code: .parents, field: "\(field).parent",
                    "a source with a parent must be one of the first \(UnitID.childSources) sources of the job",
                    hint: "move it up in sources:, or split the job file")
            }
            guard parent != source.name else {
                throw JobSpecError(
                    code: .parents, field: "\(field).parent", "the source is its own parent",
                    hint: "name another source")
            }
            if let grandparent = sources[parentIndex].parent {
                let cycle = grandparent == source.name
                throw JobSpecError(
                    code: .parents, field: "\(field).parent",
                    cycle
                        ? "'\(source.name)' and '\(parent)' are each other's parent (a cycle)"
                        : "'\(parent)' has a parent itself ('\(grandparent)'): only one level of parent is supported",
                    hint: cycle ? "one of them must take its URLs from no other source"
                        : "make '\(source.name)' a child of a source without parent:")
            }
            if source.detectsPagination || source.detectsItems {
                let key = source.detectsPagination ? "paginate" : "items"
                throw JobSpecError(
                    field: "\(field).\(key)",
                    "a source with a parent needs paginate: and items: (detection reads a first page before the run, "
                        + "and a child's URL comes from its parent's items during it)",
                    hint: "run trawl fetch --detect on one child's URL and copy the flags it prints")
            }
            guard source.matrix.isEmpty else {
                throw JobSpecError(
                    field: "\(field).matrix", "a source with a parent takes no matrix",
                    hint: "each parent item makes one unit; put the values in the parent's matrix")
            }
            let templates = try source.templates(field: field)
            for (subfield, template) in templates.all where subfield != "url" {
                if let name = template.parameters.first(where: source.isParentParameter) {
                    throw JobSpecError(
                        field: "\(field).\(subfield)", "'{\(name)}' may only be used in the url",
                        hint: "parent values go into the URL's path or query, percent-encoded")
                }
            }
            guard !source.parentKeyPaths.isEmpty else {
                throw JobSpecError(
                    field: "\(field).url", "the url names no field of '\(parent)'",
                    hint: "put {\(parent).FIELD} in the url, as in {\(parent).id}")
            }
            if let problem = Self.originProblem(templates.url, source: source) {
                throw JobSpecError(field: "\(field).url", problem, hint: "write the scheme and host before it")
            }
        }
    }

    /// Why a parent value could land in the URL's origin, or `nil`: the literal text before the first parent
    /// value must hold `scheme://host` and the `/` or `?` after it.
    static func originProblem(_ url: JobTemplate, source: JobSource) -> String? {
        var prefix = ""
        for segment in url.segments {
            switch segment {
            case .literal(let text): prefix += text
            case .environment: prefix += "x"
            case .parameter(let name):
                guard source.isParentParameter(name) else { prefix += "x"; continue }
                guard let scheme = prefix.range(of: "://"),
                    prefix[scheme.upperBound...].contains(where: { $0 == "/" || $0 == "?" })
                else { return "'{\(name)}' comes before the end of the URL's origin (scheme://host/)" }
                return nil
            }
        }
        return nil
    }
}

extension JobFileReader {
    func parentKeys(_ fields: OrderedEntries, into source: inout JobSource, _ field: String) throws(JobFileError) {
        if let node = fields["parent"]?.value { source.parent = try string(node, "\(field).parent") }
        if let node = fields["include_from_parent"]?.value {
            for (index, entry) in try sequence(node, "\(field).include_from_parent").enumerated() {
                source.includeFromParent.append(try keyPath(entry, "\(field).include_from_parent[\(index)]"))
            }
        }
    }
}

/// Percent-encoding of a parent value as one URL path segment.
enum ParentValue {
    /// Everything but RFC 3986 unreserved characters encoded, and a value of only dots (`.`, `..`) with its dots
    /// encoded too, so that it cannot climb the path.
    static func segment(_ value: String) -> String {
        let encoded = PercentEncoding.queryComponent(value)
        guard !value.isEmpty, value.allSatisfy({ $0 == "." }) else { return encoded }
        return String(repeating: "%2E", count: value.count)
    }

    /// The text of a scalar parent field as it goes into a URL, or `nil` for a missing, null, object or array
    /// value.
    static func text(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text)?: return text
        case .number?, .bool?:
            guard let value else { return nil }
            return String(decoding: value.json, as: UTF8.self)
        default: return nil
        }
    }
}
