import ArgumentParser
import Foundation

/// `-H 'Name: value'` options, as `get`, `bench`, `fetch` and `extract` take them: checked in `validate()`
/// (exit 2), split where the request is built.
enum HeaderOption {
    static func validate(_ headers: [String]) throws {
        for header in headers where !header.contains(":") {
            throw ValidationError("header '\(header)' must look like 'Name: value'")
        }
    }

    /// The name and value around the first colon, trimmed (a header without a colon has an empty value).
    static func split(_ header: String) -> (name: String, value: String) {
        let parts = header.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let value = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
        return (parts[0].trimmingCharacters(in: .whitespaces), value)
    }
}
