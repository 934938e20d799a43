/// Taking a file path apart without `NSString.deletingLastPathComponent`, which traps in
/// swift-corelibs-foundation on a one-character name (`"s"`) and on a name ending in `/` (`"a/"`): a new
/// relative directory such as `--state s` crashed the process.
///
/// ```swift
/// PathName.parent(of: "n/out.jsonl")   // "n"
/// PathName.parent(of: "s")             // ""
/// PathName.parent(of: "/s")            // "/"
/// PathName.lastComponent(of: "a/b/")   // "b"
/// ```
public enum PathName {
    /// The directory part of `path`: `""` when it has none, `"/"` for a name at the root. Trailing slashes are
    /// ignored (`"a/b/"` is `"a/b"`) and repeated ones collapse (`"a//b"` has the parent `"a"`).
    public static func parent(of path: String) -> String {
        let trimmed = trimmingTrailingSlashes(path)
        guard trimmed != "/", let slash = trimmed.lastIndex(of: "/") else { return trimmed == "/" ? "/" : "" }
        let head = trimmingTrailingSlashes(String(trimmed[..<slash]))
        return head.isEmpty ? "/" : head
    }

    /// The last component of `path`, trailing slashes ignored: `"b"` for `"a/b/"`, `"/"` for `"/"`.
    public static func lastComponent(of path: String) -> String {
        let trimmed = trimmingTrailingSlashes(path)
        guard trimmed != "/", let slash = trimmed.lastIndex(of: "/") else { return trimmed }
        return String(trimmed[trimmed.index(after: slash)...])
    }

    /// `parent(of:)`, with `"."` for a path that has no directory part: a directory that can be opened.
    public static func directory(containing path: String) -> String {
        let parent = parent(of: path)
        return parent.isEmpty ? "." : parent
    }

    private static func trimmingTrailingSlashes(_ path: String) -> String {
        var result = Substring(path)
        while result.count > 1, result.last == "/" { result = result.dropLast() }
        return String(result)
    }
}
