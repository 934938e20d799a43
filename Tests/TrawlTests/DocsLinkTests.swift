import Foundation
import Testing
import TrawlTestSupport

/// Reads links and headings the way GitHub renders them, closely enough to check a repository's own Markdown:
/// inline links and images `[text](target "title")`, `<target>` in the parentheses, and reference definitions
/// `[label]: target`, outside fenced blocks and code spans; ATX headings (`## Title`) and their anchors.
enum MarkdownLinks {
    /// Each link's target with its 1-based line number.
    static func targets(in text: String) -> [(line: Int, target: String)] {
        var found: [(line: Int, target: String)] = []
        for (number, line) in proseLines(of: text) {
            let prose = withoutCodeSpans(line)
            for match in prose.matches(of: #/\]\(\s*(?:<([^>\n]*)>|([^\s)]*))(?:\s+"[^"]*")?\s*\)/#) {
                found.append((number, String(match.output.1 ?? match.output.2 ?? "")))
            }
            if let match = prose.wholeMatch(of: #/ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?.*/#) {
                found.append((number, String(match.output.1)))
            }
        }
        return found
    }

    /// The anchors of a text's headings, as GitHub makes them: a repeated slug gets `-1`, `-2`, ...
    static func anchors(in text: String) -> Set<String> {
        var seen: [String: Int] = [:]
        var anchors: Set<String> = []
        for (_, line) in proseLines(of: text) {
            guard let match = line.wholeMatch(of: #/ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*/#) else { continue }
            let slug = gitHubSlug(String(match.output.1))
            let repeats = seen[slug, default: 0]
            seen[slug] = repeats + 1
            anchors.insert(repeats == 0 ? slug : "\(slug)-\(repeats)")
        }
        return anchors
    }

    /// GitHub's anchor for a heading: the rendered text (code spans, emphasis and links reduced to their text),
    /// lowercased, keeping letters, marks, digits, `_`, `-` and spaces, each space then a `-`.
    static func gitHubSlug(_ heading: String) -> String {
        let rendered = heading.replacing(#/!?\[([^\]]*)\]\([^)]*\)/#) { String($0.output.1) }
        var slug = ""
        for scalar in rendered.lowercased().unicodeScalars {
            if scalar == " " || scalar == "-" {
                slug.append("-")
                continue
            }
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber,
                .connectorPunctuation:
                slug.unicodeScalars.append(scalar)
            default:
                continue
            }
        }
        return slug
    }

    /// The lines outside fenced code blocks (``` or ~~~, indented or not), numbered from 1.
    static func proseLines(of text: String) -> [(Int, Substring)] {
        var lines: [(Int, Substring)] = []
        var fence: Substring?
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if let open = fence {
                if trimmed.hasPrefix(open), trimmed.allSatisfy({ $0 == open.first || $0 == " " }) { fence = nil }
                continue
            }
            if let marker = trimmed.firstMatch(of: #/^(```+|~~~+)/#) {
                fence = marker.output.1
                continue
            }
            lines.append((index + 1, line))
        }
        return lines
    }

    /// A line with its code spans (`` `text` ``, a run of n backticks closed by a run of n) removed.
    static func withoutCodeSpans(_ line: Substring) -> String {
        var result = ""
        var rest = line[...]
        while let open = rest.firstRange(of: #/`+/#) {
            result += rest[..<open.lowerBound]
            let run = rest[open]
            let after = rest[open.upperBound...]
            let closing = after.ranges(of: run).first { range in
                (range.upperBound == after.endIndex || after[range.upperBound] != "`")
                    && (range.lowerBound == after.startIndex || after[after.index(before: range.lowerBound)] != "`")
            }
            guard let close = closing else {
                result += run
                rest = after
                continue
            }
            rest = after[close.upperBound...]
        }
        return result + rest
    }
}

/// What is wrong with the links of one document: a target outside the repository, a file that does not exist,
/// an anchor no heading of the target makes. `document` is the path from `root`, which the targets may not leave.
func deadLinks(in text: String, document: String, root: URL) -> [String] {
    let rootPath = root.standardizedFileURL.path
    let folder = root.appendingPathComponent(document).deletingLastPathComponent()
    var problems: [String] = []
    for (line, target) in MarkdownLinks.targets(in: text) {
        let place = "\(document):\(line): (\(target))"
        if target.hasPrefix("http://") || target.hasPrefix("https://") || target.hasPrefix("mailto:") { continue }
        if target.isEmpty || target.firstMatch(of: #/^[A-Za-z][A-Za-z0-9+.-]*:/#) != nil || target.hasPrefix("/") {
            problems.append("\(place) is neither a relative path nor an http(s) or mailto link")
            continue
        }
        let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let path = String(parts[0]).removingPercentEncoding ?? String(parts[0])
        let fragment = parts.count > 1 ? String(parts[1]).removingPercentEncoding ?? String(parts[1]) : nil
        if path.isEmpty {
            if let fragment, !MarkdownLinks.anchors(in: text).contains(fragment) {
                problems.append("\(place): no heading in \(document) has the anchor #\(fragment)")
            }
            continue
        }
        let file = folder.appendingPathComponent(path).standardizedFileURL
        guard file.path.hasPrefix(rootPath + "/") else {
            problems.append("\(place) leads outside the repository, to \(file.path)")
            continue
        }
        guard FileManager.default.fileExists(atPath: file.path) else {
            problems.append("\(place): no file \(String(file.path.dropFirst(rootPath.count + 1)))")
            continue
        }
        guard let fragment else { continue }
        guard file.pathExtension == "md", let targetText = try? String(contentsOf: file, encoding: .utf8) else {
            problems.append("\(place): an anchor into a file that is not Markdown")
            continue
        }
        if !MarkdownLinks.anchors(in: targetText).contains(fragment) {
            problems.append("\(place): no heading in \(file.lastPathComponent) has the anchor #\(fragment)")
        }
    }
    return problems
}

@Suite("README.md and docs/: every relative link and anchor resolves, README stays a front page", .hangGuard)
struct DocsLinkTests {
    /// README.md and every docs/*.md, as paths from the repository's root.
    static func documents() throws -> [String] {
        let folder = repositoryRoot.appendingPathComponent("docs").path
        let docs = try FileManager.default.contentsOfDirectory(atPath: folder)
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    @Test("every link and image of README.md and docs/*.md reaches a file in the repository, and its anchor a heading")
    func everyLinkResolves() throws {
        let documents = try Self.documents()
        #expect(documents.count >= 8, "README.md and the docs/ pages: \(documents)")
        var links = 0
        for document in documents {
            let text = try repositoryFile(document)
            links += MarkdownLinks.targets(in: text).count
            for problem in deadLinks(in: text, document: document, root: repositoryRoot) {
                Issue.record(Comment(rawValue: problem))
            }
        }
        #expect(links > 30, "only \(links) links found: is the link reader still reading them?")
    }

    @Test("README.md links to every page of docs/")
    func readmeLinksEveryPage() throws {
        let readme = Set(MarkdownLinks.targets(in: try repositoryFile("README.md")).map {
            String($0.target.prefix { $0 != "#" })
        })
        for page in try Self.documents().dropFirst() {
            #expect(readme.contains(page), "README.md does not link to \(page)")
        }
    }

    @Test("README.md is a front page: at most 200 lines")
    func readmeIsShort() throws {
        let lines = try repositoryFile("README.md").split(separator: "\n", omittingEmptySubsequences: false)
        let count = lines.last == "" ? lines.count - 1 : lines.count
        #expect(count <= 200, "README.md has \(count) lines; move the detail into docs/")
    }

    @Test("a dead file, a wrong anchor, a way out of the repository and an absolute path are each reported")
    func deadLinksAreFound() throws {
        let text = """
            # Title
            [fine](../README.md) and [fine too](#title), ![image](bench-report.png "a title") [web](https://x.org/a)
            [gone](missing.md) and [wrong anchor](jobs.md#no-such-heading)
            [out](../../elsewhere/DESIGN.md) [absolute](/docs/jobs.md)
            `[in code](missing.md)` and
            ```
            [in a fence](missing.md)
            ```
            [ref]: nothing-here.md
            """
        let problems = deadLinks(in: text, document: "docs/example.md", root: repositoryRoot)
        #expect(problems.count == 5, "\(problems)")
        let expected = ["missing.md", "#no-such-heading", "leads outside", "/docs/jobs.md", "nothing-here.md"]
        for fragment in expected {
            #expect(problems.contains { $0.contains(fragment) }, "no problem names \(fragment): \(problems)")
        }
        #expect(problems.allSatisfy { !$0.contains("in code") && !$0.contains(":7:") })
    }

    @Test("anchors are GitHub's: code spans and punctuation dropped, spaces to hyphens, repeats numbered")
    func anchorsAreGitHubs() {
        #expect(MarkdownLinks.gitHubSlug("Load testing: `trawl bench`") == "load-testing-trawl-bench")
        #expect(
            MarkdownLinks.gitHubSlug("Dependent resources (parent → child)") == "dependent-resources-parent--child")
        #expect(MarkdownLinks.gitHubSlug("Conditional requests (`--cache`)") == "conditional-requests---cache")
        #expect(MarkdownLinks.gitHubSlug("The `@JSONFieldsDecodable` macro") == "the-jsonfieldsdecodable-macro")
        #expect(MarkdownLinks.gitHubSlug("snake_case and [a link](x.md)") == "snake_case-and-a-link")
        let anchors = MarkdownLinks.anchors(in: "# A\n## A\n```\n# Not a heading\n```\n### A ###\n")
        #expect(anchors == ["a", "a-1", "a-2"])
    }
}
