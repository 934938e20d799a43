import ArgumentParser
import Foundation
import TrawlEngine

/// `-H 'Name: value'` options, as `get`, `bench`, `fetch` and `extract` take them: checked in `validate()`
/// (exit 2), split where the request is built.
enum HeaderOption {
    static func validate(_ headers: [String]) throws {
        for header in headers where !header.contains(":") && !sendsEmpty(header) {
            throw ValidationError("header '\(header)' must look like 'Name: value'")
        }
    }

    /// `Name;` (curl's way to send a header with an empty value, where `Name:` removes it).
    static func sendsEmpty(_ header: String) -> Bool {
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        return trimmed.hasSuffix(";") && !trimmed.contains(":")
    }

    /// The name and value around the first colon, trimmed (a header without a colon has an empty value, and
    /// `Name;` is `Name` with an empty value).
    static func split(_ header: String) -> (name: String, value: String) {
        if sendsEmpty(header) {
            let name = header.trimmingCharacters(in: .whitespaces).dropLast()
            return (name.trimmingCharacters(in: .whitespaces), "")
        }
        let parts = header.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let value = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
        return (parts[0].trimmingCharacters(in: .whitespaces), value)
    }

    /// `--sensitive-header NAME` values: header names.
    static func validateSensitive(_ names: [String]) throws {
        for name in names where name.isEmpty || name.contains(where: { $0 == ":" || $0.isWhitespace }) {
            throw ValidationError("--sensitive-header '\(name)' is not a header name")
        }
    }

    /// Marks `names` as credentials of `request`: a redirect to another origin removes them, as it removes
    /// `Authorization`, `Cookie`, API keys and `*-Token` headers by their names alone.
    static func markSensitive(_ names: [String], in request: inout Request) {
        request.sensitiveHeaders.formUnion(names.map { $0.lowercased() })
    }

    /// Adds `headers` to `request` as curl does: `Name: value` adds it, `Name:` removes the header trawl would
    /// send by default (User-Agent, Accept…), `Name;` sends it with an empty value.
    static func apply(_ headers: [String], to request: inout Request) {
        for header in headers {
            let (name, value) = split(header)
            if value.isEmpty, !sendsEmpty(header) {
                request.removedHeaders.insert(name)
            } else {
                request.headers.add(name, value)
            }
        }
    }
}
