import Foundation

// The tests hold README.md's and docs/'s examples to what they say: a Swift block has a compiled copy in a test
// file that must equal it character for character, a job file is parsed or run as written. These read the blocks
// from where they live, so a block that moves takes its test's marker with it.

/// The checkout's root: this file is `Tests/TrawlTestSupport/DocsFiles.swift` in it.
public let repositoryRoot: URL = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url
}()

/// A block, a marker or a file the tests expected in the documentation and did not find.
public struct DocsError: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}

/// The text of a file of the checkout, by its path from the root: `repositoryFile("README.md")`.
public func repositoryFile(_ path: String) throws -> String {
    let url = repositoryRoot.appendingPathComponent(path)
    do {
        return try String(contentsOf: url, encoding: .utf8)
    } catch {
        throw DocsError("cannot read \(path) (\(url.path)): \(error)")
    }
}

/// The text of a page of the manual: `docsFile("jobs.md")` reads `docs/jobs.md`.
public func docsFile(_ name: String) throws -> String { try repositoryFile("docs/" + name) }

/// The first fenced block in `language` after the first `marker` in `text` (a heading, a sentence), without
/// its fences and its last line break:
///
///     let yaml = try codeBlock("yaml", after: "## A daily job", in: try docsFile("jobs.md"))
public func codeBlock(_ language: String, after marker: String, in text: String) throws -> String {
    guard let found = text.range(of: marker) else { throw DocsError("no '\(marker)' in the text") }
    let fence = "\n```\(language)\n"
    guard let open = text.range(of: fence, range: found.upperBound..<text.endIndex) else {
        throw DocsError("no ```\(language) block after '\(marker)'")
    }
    guard let close = text.range(of: "\n```", range: open.upperBound..<text.endIndex) else {
        throw DocsError("the ```\(language) block after '\(marker)' is not closed")
    }
    return String(text[open.upperBound..<close.lowerBound])
}

/// The compiled copy of a documented block at the top of the test file `path` (the caller's file by default),
/// between its `// BEGIN DOC` line and its `// END DOC` line.
public func compiledCopy(in path: String = #filePath) throws -> String {
    let source = try String(contentsOf: URL(fileURLWithPath: path), encoding: .utf8)
    guard let begin = source.range(of: "// BEGIN DOC"),
        let firstLine = source.range(of: "\n", range: begin.upperBound..<source.endIndex),
        let end = source.range(of: "\n// END DOC", range: firstLine.lowerBound..<source.endIndex)
    else { throw DocsError("\(path) has no '// BEGIN DOC' ... '// END DOC' copy") }
    return String(source[firstLine.upperBound..<end.lowerBound])
}

/// Where a compiled copy first differs from the documented block, in a message naming both lines; `nil` when
/// they are equal, character for character.
public func firstDifference(documented: String, copy: String, documentedIn place: String) -> String? {
    if documented == copy { return nil }
    let documentedLines = documented.split(separator: "\n", omittingEmptySubsequences: false)
    let copyLines = copy.split(separator: "\n", omittingEmptySubsequences: false)
    let index = zip(documentedLines, copyLines).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        ?? min(documentedLines.count, copyLines.count)
    func line(_ lines: [Substring]) -> String { index < lines.count ? String(lines[index]) : "<end>" }
    return """
        \(place) and its compiled copy differ at line \(index + 1) of the block:
        documented: \(line(documentedLines))
        copy:       \(line(copyLines))
        """
}
