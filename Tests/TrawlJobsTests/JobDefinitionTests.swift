import Foundation
import Testing
import TrawlTestSupport
import TrawlJSON

@testable import Trawl
@testable import TrawlJobs
@testable import TrawlEngine

private let environment = ["GITHUB_TOKEN": "ghp_s3cr3t/+x", "API_KEY": "key 1"]

private let fullYAML = """
    settings:
      concurrency: 4
      per_host: 2
      rate: 2.5
      attempts: 3
      backoff_ms: 100
      max_backoff_ms: 5000
      max_wait_s: 30
      timeout_s: 10
    sources:
      - name: repos
        url: "https://api.github.com/orgs/{org}/repos?since={day}&until={day.end}"
        headers:
          Authorization: "Bearer ${GITHUB_TOKEN}"
          Accept: application/json
        paginate: link
        items: $
        matrix:
          org: [apple, swiftlang]
          day: "2024-01-01..2024-01-14 step 7d"
      - name: search
        url: "https://api.example.com/search?q={term}"
        method: post
        headers: {X-Term: "{term}", X-Key: "${API_KEY}"}
        body: '{"q":"{term}","n":{"k":1}}'
        paginate: {style: cursor, cursor: data.-1.id, param: starting_after, has_more: has_more}
        items: data
        side: [total_count, incomplete_results]
        matrix:
          term: ["a b", "x&y=z/é"]
      - name: pages
        url: "https://api.example.com/p"
        paginate: {style: page, param: pg, start: 0, size_param: per_page, size: 100, total_pages: total_pages,
                   total_items: total_count}
        items: items
      - name: offs
        url: https://api.example.com/o
        paginate: {style: offset, param: offset, limit_param: limit, limit: 100, total: total}
        items: results
      - name: nexts
        url: https://api.example.com/n?n={n}&to={n.end}
        paginate: {style: next, next: links.next}
        items: ""
        matrix:
          n: "1..10 step 3"
      - name: linked
        url: https://api.example.com/l
        paginate: {style: link, page_param: p}
        items: items
    """

private let fullJSON = """
    {
    \t"settings": {"concurrency": 4, "per_host": 2, "rate": 2.5, "attempts": 3, "backoff_ms": 100,
    \t             "max_backoff_ms": 5000, "max_wait_s": 30, "timeout_s": 10},
    \t"sources": [
    \t\t{"name": "repos", "url": "https://api.github.com/orgs/{org}/repos?since={day}&until={day.end}",
    \t\t "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}", "Accept": "application/json"},
    \t\t "paginate": "link", "items": "$",
    \t\t "matrix": {"org": ["apple", "swiftlang"], "day": "2024-01-01..2024-01-14 step 7d"}},
    \t\t{"name": "search", "url": "https://api.example.com/search?q={term}", "method": "POST",
    \t\t "headers": {"X-Term": "{term}", "X-Key": "${API_KEY}"},
    \t\t "body": "{\\"q\\":\\"{term}\\",\\"n\\":{\\"k\\":1}}",
    \t\t "paginate": {"style": "cursor", "cursor": "data.-1.id", "param": "starting_after", "has_more": "has_more"},
    \t\t "items": "data", "side": ["total_count", "incomplete_results"],
    \t\t "matrix": {"term": ["a b", "x&y=z/é"]}},
    \t\t{"name": "pages", "url": "https://api.example.com/p",
    \t\t "paginate": {"style": "page", "param": "pg", "start": 0, "size_param": "per_page", "size": 100,
    \t\t              "total_pages": "total_pages", "total_items": "total_count"},
    \t\t "items": "items"},
    \t\t{"name": "offs", "url": "https://api.example.com/o",
    \t\t "paginate": {"style": "offset", "param": "offset", "limit_param": "limit", "limit": 100, "total": "total"},
    \t\t "items": "results"},
    \t\t{"name": "nexts", "url": "https://api.example.com/n?n={n}&to={n.end}",
    \t\t "paginate": {"style": "next", "next": "links.next"}, "items": "", "matrix": {"n": "1..10 step 3"}},
    \t\t{"name": "linked", "url": "https://api.example.com/l", "paginate": {"style": "link", "page_param": "p"},
    \t\t "items": "items"}
    \t]
    }
    """

private func parse(_ text: String, env: [String: String] = environment) throws -> Job {
    try Job.parse(text, file: "jobs.yaml", environment: env)
}

/// The error a job file gives, or an issue when it parses.
private func fileError(
    _ text: String, env: [String: String] = environment, sourceLocation: SourceLocation = #_sourceLocation
) -> JobFileError? {
    do {
        _ = try Job.parse(text, file: "jobs.yaml", environment: env)
        Issue.record("expected a JobFileError", sourceLocation: sourceLocation)
    } catch {
        return error
    }
    return nil
}

private func bodyText(_ request: Request) -> String? {
    guard let body = request.body, case .bytes(let bytes) = body.source else { return nil }
    return String(decoding: bytes, as: UTF8.self)
}

private func source(_ extra: String, url: String = "https://x.test/items", matrix: String = "") -> String {
    """
    sources:
      - name: s
        url: "\(url)"
        paginate: link
        items: items
    \(extra)\(matrix)
    """
}

@Suite(.hangGuard) struct JobDefinitionFileTests {
    @Test func yamlAndJSONParseToTheSameJob() throws {
        let yaml = try parse(fullYAML)
        let json = try Job.parse(fullJSON, file: "jobs.json", environment: environment)
        #expect(yaml == json)

        #expect(yaml.settings.concurrency == 4)
        #expect(yaml.settings.perHost == 2)
        #expect(yaml.settings.ratePerHost == 2.5)
        #expect(yaml.settings.attempts == 3)
        #expect(yaml.settings.backoff == .milliseconds(100))
        #expect(yaml.settings.maxBackoff == .seconds(5))
        #expect(yaml.settings.maxWait == .seconds(30))
        #expect(yaml.settings.timeout == .seconds(10))

        #expect(yaml.sources.map(\.name) == ["repos", "search", "pages", "offs", "nexts", "linked"])
        let repos = yaml.sources[0]
        #expect(repos.headers == [
            JobHeader(name: "Authorization", value: "Bearer ${GITHUB_TOKEN}"),
            JobHeader(name: "Accept", value: "application/json"),
        ])
        #expect(repos.pagination == .link())
        #expect(repos.items == .root)
        #expect(repos.matrix.map(\.name) == ["org", "day"])
        #expect(repos.matrix[1].values.map(\.value) == ["2024-01-01", "2024-01-08"])

        let search = yaml.sources[1]
        #expect(search.method == .post)
        #expect(search.body == #"{"q":"{term}","n":{"k":1}}"#)
        #expect(search.pagination == .cursor(at: "data.-1.id", param: "starting_after", hasMore: "has_more"))
        #expect(search.side == ["total_count", "incomplete_results"])
        #expect(yaml.sources[2].pagination == .page(
            param: "pg", start: 0, sizeParam: "per_page", size: 100, totalPages: "total_pages",
            totalItems: "total_count"))
        #expect(yaml.sources[3].pagination == .offset(param: "offset", limitParam: "limit", limit: 100, total: "total"))
        #expect(yaml.sources[4].pagination == .nextURL(at: "links.next"))
        #expect(yaml.sources[4].items == .root)
        #expect(yaml.sources[5].pagination == .link(pageParam: "p"))
    }

    @Test func jobKeepsTemplatesNotSecrets() throws {
        let job = try parse(fullYAML)
        #expect(job.secretNames == ["GITHUB_TOKEN", "API_KEY"])
        #expect(!job.canonicalDescription.contains("s3cr3t"))
    }

    @Test func loadReadsAFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("trawl-job-\(UUID()).yaml").path
        try fullYAML.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try Job.load(contentsOf: path, environment: environment) == parse(fullYAML))

        do {
            _ = try Job.load(contentsOf: "/nonexistent/jobs.yaml", environment: [:])
            Issue.record("expected an error")
        } catch {
            #expect(error.file == "/nonexistent/jobs.yaml")
            #expect(error.description.contains("cannot read"))
        }
    }

    @Test func syntaxErrorsCarryYamsMark() throws {
        let error = try #require(fileError("sources:\n  - name: a\n    url: [x, y\n  paginate: link\n"))
        #expect(error.line != nil)
        #expect(error.description.hasPrefix("jobs.yaml:\(error.line ?? 0):"))
        #expect(error.message.contains("invalid YAML"))

        let json = try #require(fileError("{\"sources\": [{\"name\": \"a\",, }]}"))
        #expect(json.line == 1)

        let duplicate = try #require(fileError("sources: []\nsources: []\n"))
        #expect(duplicate.message.contains("duplicate key 'sources'"))
    }

    @Test func unknownKeysListTheAllowedOnes() throws {
        let error = try #require(fileError(source("    urll: x\n")))
        #expect(error.line == 6)
        #expect(error.column == 5)
        #expect(error.field == "sources[0].urll")
        #expect(error.message == "unknown key 'urll'")
        #expect(error.hint?.contains("name, url, method, headers, body, paginate, items, side, matrix") == true)

        let top = try #require(fileError("source: []\n"))
        #expect(top.description == "jobs.yaml:1:1: source: unknown key 'source' (allowed here: settings, sources)")

        let setting = try #require(fileError("settings: {concurency: 3}\n" + source("")))
        #expect(setting.field == "settings.concurency")
        #expect(setting.line == 1)

        let paginate = try #require(fileError("""
            sources:
              - name: s
                url: https://x.test
                items: items
                paginate:
                  style: page
                  limit: 10
            """))
        #expect(paginate.line == 7)
        #expect(paginate.field == "sources[0].paginate.limit")
        #expect(paginate.hint?.contains("size_param") == true)
    }

    @Test func unknownPaginationStyle() throws {
        let text = "sources:\n  - name: a\n    url: https://x.test\n    items: items\n    paginate: pages\n"
        let error = try #require(fileError(text))
        #expect(
            error.description
                == "jobs.yaml:5:15: sources[0].paginate: unknown style 'pages' "
                + "(use link, page, offset, cursor:KEYPATH or next:KEYPATH)")
        let cursor = try #require(fileError(text.replacing("pages", with: "cursor")))
        #expect(cursor.message.contains("key path of the next cursor"))
    }

    @Test func wrongTypes() throws {
        let concurrency = try #require(fileError("settings:\n  concurrency: many\n" + source("")))
        #expect(concurrency.line == 2)
        #expect(concurrency.field == "settings.concurrency")
        #expect(concurrency.message == "expected an integer, found the string 'many'")

        let zero = try #require(fileError("settings:\n  attempts: 0\n" + source("")))
        #expect(zero.message.contains("at least 1"))

        let headers = try #require(fileError(source("    headers: [a, b]\n")))
        #expect(headers.field == "sources[0].headers")
        #expect(headers.message == "expected a mapping, found a list")

        let url = try #require(fileError("sources:\n  - name: a\n    url: {x: 1}\n    paginate: link\n    items: a\n"))
        #expect(url.field == "sources[0].url")
        #expect(url.line == 3)

        let sources = try #require(fileError("sources: repos\n"))
        #expect(sources.message == "expected a list, found the string 'repos'")

        let axis = try #require(fileError(source("    matrix:\n      org: apple\n")))
        #expect(axis.field == "sources[0].matrix.org")
        #expect(axis.message == "expected a list of values or a range")
    }

    @Test func missingRequiredFields() throws {
        let error = try #require(fileError("sources:\n  - name: a\n    paginate: link\n    items: a\n"))
        #expect(error.field == "sources[0]")
        #expect(error.line == 2)
        #expect(error.message == "url is missing")

        let noSources = try #require(fileError("settings: {concurrency: 2}\n"))
        #expect(noSources.message == "the job has no sources")
        let empty = try #require(fileError("sources: []\n"))
        #expect(empty.field == "sources")
        let nothing = try #require(fileError(""))
        #expect(nothing.message == "the job file is empty")
        // Found by the job-file fuzz target: an empty URL parsed, and every unit then failed at its first page.
        let noURL = try #require(fileError("sources:\n  - {name: a, url: \"\", paginate: link, items: items}\n"))
        #expect(noURL.field == "sources[0].url")
        #expect(noURL.line == 2)
        #expect(noURL.message == "the URL is empty")
    }

    @Test func duplicateSourceNames() throws {
        let text = """
            sources:
              - {name: a, url: "https://x.test/1", paginate: link, items: items}
              - {name: b, url: "https://x.test/2", paginate: link, items: items}
              - {name: a, url: "https://x.test/3", paginate: link, items: items}
            """
        let error = try #require(fileError(text))
        #expect(error.line == 4)
        #expect(error.field == "sources[2].name")
        #expect(error.message == "'a' is used by sources[0] too")
    }

    @Test func badKeyPaths() throws {
        let items = try #require(fileError(source("").replacing("items: items", with: "items: data..items")))
        #expect(items.field == "sources[0].items")
        #expect(items.line == 5)
        #expect(items.message.contains("empty key"))

        let side = try #require(fileError(source("    side: [ok, \"a.\"]\n")))
        #expect(side.field == "sources[0].side[1]")
        #expect(side.line == 6)

        let cursor = try #require(fileError("""
            sources:
              - name: s
                url: https://x.test
                items: items
                paginate: "cursor:data..id"
            """))
        #expect(cursor.field == "sources[0].paginate")
        #expect(cursor.line == 5)
    }

    @Test func badRanges() throws {
        let date = try #require(fileError(source("    matrix:\n      day: \"2024-02-30..2024-03-31\"\n")))
        #expect(date.field == "sources[0].matrix.day")
        #expect(date.line == 7)
        #expect(date.message.contains("not a valid date"))

        let backwards = try #require(fileError(source("    matrix:\n      n: \"10..1\"\n")))
        #expect(backwards.message.contains("ends before it starts"))

        let step = try #require(fileError(source("    matrix:\n      day: \"2024-01-01..2024-02-01 step 1m\"\n")))
        #expect(step.message.contains("not a date step"))

        let zero = try #require(fileError(source("    matrix:\n      n: \"1..9 step 0\"\n")))
        #expect(zero.message.contains("not a positive integer step"))

        let twice = try #require(fileError(source("    matrix:\n      org: [a, b, a]\n")))
        #expect(twice.message.contains("appears twice"))
    }

    @Test func templatesMustNameDefinedParameters() throws {
        let unknown = try #require(
            fileError(source("", url: "https://x.test/{orgs}", matrix: "    matrix:\n      org: [a]\n")))
        #expect(unknown.field == "sources[0].url")
        #expect(unknown.line == 3)
        #expect(unknown.message == "'{orgs}' names no matrix parameter")
        #expect(unknown.hint == "parameters here: org")

        let noMatrix = try #require(fileError(source("", url: "https://x.test/{org}")))
        #expect(noMatrix.hint?.contains("no matrix") == true)

        let listEnd = try #require(
            fileError(source("", url: "https://x.test/{org.end}", matrix: "    matrix:\n      org: [a]\n")))
        #expect(listEnd.message == "'{org.end}' names no matrix parameter")

        let unclosed = try #require(
            fileError(source("    headers: {X-Org: \"id-{org\"}\n", matrix: "    matrix:\n      org: [a]\n")))
        #expect(unclosed.field == "sources[0].headers.X-Org")
        #expect(unclosed.line == 6)
        #expect(unclosed.message == "unclosed '{org'")

        let badEnv = try #require(fileError(source("", url: "https://x.test/${TOKEN")))
        #expect(badEnv.message.contains("not an environment variable reference"))
    }

    @Test func environmentVariablesMustBeSet() throws {
        let text = source("    headers:\n      Accept: json\n      Authorization: \"Bearer ${MISSING_TOKEN}\"\n")
        let error = try #require(fileError(text))
        #expect(error.line == 8)
        #expect(error.field == "sources[0].headers.Authorization")
        #expect(error.message == "environment variable MISSING_TOKEN is not set")
        // Present but empty is set.
        #expect(throws: Never.self) { try parse(text, env: ["MISSING_TOKEN": ""]) }
    }
}

@Suite(.hangGuard) struct JobDefinitionUnitTests {
    @Test func matrixExpandsInCartesianOrder() throws {
        let job = try parse(fullYAML)
        let units = try job.units(environment: environment)
        #expect(units.map(\.ordinal) == Array(0..<units.count))
        #expect(units.count == 4 + 2 + 1 + 1 + 4 + 1)
        #expect(units.prefix(4).map(\.id) == [
            "repos org=apple day=2024-01-01", "repos org=apple day=2024-01-08",
            "repos org=swiftlang day=2024-01-01", "repos org=swiftlang day=2024-01-08",
        ])
        let first = units[0]
        #expect(first.sourceIndex == 0)
        #expect(first.source == "repos")
        #expect(first.parameters == [
            MatrixBinding(name: "org", value: "apple"), MatrixBinding(name: "day", value: "2024-01-01"),
            MatrixBinding(name: "day.end", value: "2024-01-07"),
        ])
        #expect(first.request.url == "https://api.github.com/orgs/apple/repos?since=2024-01-01&until=2024-01-07")
        #expect(first.request.method == .get)
        #expect(Array(first.request.headers.map(\.name)) == ["Authorization", "Accept"])
        #expect(first.request.headers["Authorization"] == "Bearer ghp_s3cr3t/+x")
        #expect(first.request.body == nil)
        #expect(units.map(\.source).filter { $0 == "pages" } == ["pages"])
        #expect(units.first { $0.source == "pages" }?.id == "pages")
        #expect(Set(units.map(\.id)).count == units.count)
    }

    @Test func urlValuesArePercentEncodedButHeadersAndBodiesAreNot() throws {
        let units = try parse(fullYAML).units(environment: environment).filter { $0.source == "search" }
        #expect(units.map(\.id) == ["search term=a b", "search term=x&y=z/é"])
        let request = units[1].request
        #expect(request.url == "https://api.example.com/search?q=x%26y%3Dz%2F%C3%A9")
        #expect(units[0].request.url == "https://api.example.com/search?q=a%20b")
        #expect(request.method == .post)
        #expect(request.headers["X-Term"] == "x&y=z/é")
        #expect(request.headers["X-Key"] == "key 1")
        #expect(bodyText(request) == #"{"q":"x&y=z/é","n":{"k":1}}"#)
        #expect(request.body?.contentType == "application/json")
        #expect(units[1].pagination == .cursor(at: "data.-1.id", param: "starting_after"))
        #expect(units[1].items == "data")
        #expect(units[1].side == ["total_count", "incomplete_results"])
    }

    @Test func environmentValuesInURLsAreRaw() throws {
        let job = Job(sources: [
            JobSource(name: "s", url: "https://x.test/{q}?key=${API_KEY}", pagination: .link(), items: .root,
                matrix: [MatrixAxis(name: "q", values: ["a/b"])])
        ])
        let units = try job.units(environment: ["API_KEY": "k&1"])
        #expect(units[0].request.url == "https://x.test/a%2Fb?key=k&1")
        #expect(throws: JobSpecError.self) { try job.units(environment: [:]) }
    }

    @Test func templatesKeepLiteralBraces() throws {
        let template = try JobTemplate(parsing: #"{"a":{"b":"{x}"}, "c": { x }, "{y.end}"}"#)
        #expect(template.parameters == ["x", "y.end"])
        let text = try template.expand(
            parameters: ["x": "1", "y.end": "2"], environment: [:], encodingParameters: false)
        #expect(text == #"{"a":{"b":"1"}, "c": { x }, "2"}"#)
        #expect(throws: JobSpecError.self) { try JobTemplate(parsing: "a{b") }
        #expect(throws: JobSpecError.self) { try JobTemplate(parsing: "a{b.") }
        #expect(throws: JobSpecError.self) { try JobTemplate(parsing: "a${b") }
        #expect(try JobTemplate(parsing: "cost: $5 {}").parameters.isEmpty)
    }

    @Test func dateWindowsAcrossMonthEndsAndLeapDays() throws {
        let days = try MatrixAxis.range("day", "2024-02-27..2024-03-02")
        #expect(days.values.map(\.value) == ["2024-02-27", "2024-02-28", "2024-02-29", "2024-03-01", "2024-03-02"])
        #expect(days.values.map { $0.extra } == days.values.map { [MatrixBinding(name: "end", value: $0.value)] })

        let notLeap = try MatrixAxis.range("day", "2023-02-27..2023-03-01 step 1d")
        #expect(notLeap.values.map(\.value) == ["2023-02-27", "2023-02-28", "2023-03-01"])

        let weeks = try MatrixAxis.range("week", "2024-01-01..2024-01-31 step 7d")
        #expect(weeks.values.map(\.value) == ["2024-01-01", "2024-01-08", "2024-01-15", "2024-01-22", "2024-01-29"])
        #expect(weeks.values.last?.extra == [MatrixBinding(name: "end", value: "2024-01-31")])
        #expect(weeks.values.first?.extra == [MatrixBinding(name: "end", value: "2024-01-07")])
        #expect(try MatrixAxis.range("w", "2024-01-01..2024-01-31 step 1w") == weeks.renamed("w"))

        let yearEnd = try MatrixAxis.range("d", "2023-12-25..2024-01-10 step 10d")
        #expect(yearEnd.values.map(\.value) == ["2023-12-25", "2024-01-04"])
        #expect(yearEnd.values.map { $0.extra[0].value } == ["2024-01-03", "2024-01-10"])

        let year = try MatrixAxis.range("d", "2024-01-01..2024-12-31")
        #expect(year.values.count == 366)
        #expect(year.values[59].value == "2024-02-29")
        #expect(try MatrixAxis.range("d", "2100-02-28..2100-03-01").values.count == 2)
        #expect(throws: JobSpecError.self) { try MatrixAxis.range("d", "2023-02-29..2023-03-01") }
    }

    @Test func integerRanges() throws {
        let axis = try MatrixAxis.range("n", "1..10 step 3")
        #expect(axis.values.map(\.value) == ["1", "4", "7", "10"])
        #expect(axis.values.map { $0.extra[0].value } == ["3", "6", "9", "10"])
        #expect(try MatrixAxis.range("n", "-2..2").values.map(\.value) == ["-2", "-1", "0", "1", "2"])
        #expect(try MatrixAxis.range("n", "5..5 step 100").values.map { $0.extra[0].value } == ["5"])
        #expect(throws: JobSpecError.self) { try MatrixAxis.range("n", "1..10 step") }
        #expect(throws: JobSpecError.self) { try MatrixAxis.range("n", "1..99999999999") }

        let units = try parse(fullYAML).units(environment: environment).filter { $0.source == "nexts" }
        #expect(units.map(\.request.url) == [
            "https://api.example.com/n?n=1&to=3", "https://api.example.com/n?n=4&to=6",
            "https://api.example.com/n?n=7&to=9", "https://api.example.com/n?n=10&to=10",
        ])
    }

    /// A range is kept as its bounds until the units are built: parsing and checking a million-value axis reads no
    /// value, and it equals (and hashes as) the list of the same values.
    @Test func rangesAreReadLazilyAndEqualTheirLists() throws {
        let million = try MatrixAxis.range("n", "0..999999")
        #expect(million.values.count == 1_000_000)
        #expect(million.values[999_999] == MatrixValue("999999", extra: [MatrixBinding(name: "end", value: "999999")]))
        let yaml = """
            sources:
              - name: big
                url: https://api.example.com/n?n={n}&to={n.end}&d={d}
                paginate: link
                items: items
                matrix:
                  n: "1..1000000"
                  d: "1990-01-01..2990-01-01 step 2000000000000000000w"
            """
        let job = try Job.parse(yaml, file: "big.yaml", environment: [:])
        #expect(job.sources[0].matrix[0].values.count == 1_000_000)
        // A step longer than the range is one window that ends at END, not an overflow.
        #expect(Array(job.sources[0].matrix[1].values) == [
            MatrixValue("1990-01-01", extra: [MatrixBinding(name: "end", value: "2990-01-01")])
        ])
        #expect(try MatrixAxis.range("n", "1..3 step 9223372036854775807").values.map(\.value) == ["1"])

        let listed = MatrixAxis(name: "n", values: (1...10).map {
            MatrixValue(String($0), extra: [MatrixBinding(name: "end", value: String($0))])
        })
        let range = try MatrixAxis.range("n", "1..10")
        #expect(range == listed)
        #expect(range.hashValue == listed.hashValue)
        #expect(try MatrixAxis.range("n", "1..11") != listed)
        #expect(Set([range, listed]).count == 1)
    }

    @Test func fingerprintIsStableAndIgnoresSettings() throws {
        let first = try parse(fullYAML)
        let second = try Job.parse(fullJSON, file: "jobs.json", environment: environment)
        #expect(first.fingerprint == second.fingerprint)
        #expect(first.fingerprint.count == 16)
        #expect(first.fingerprint.allSatisfy { $0.isHexDigit })

        let faster = try parse(fullYAML.replacing("concurrency: 4", with: "concurrency: 64"))
        #expect(faster.fingerprint == first.fingerprint)
        // The secret's value does not matter: templates are hashed unexpanded.
        let otherToken = try Job.parse(fullYAML, file: "jobs.yaml", environment: ["GITHUB_TOKEN": "x", "API_KEY": "y"])
        #expect(otherToken.fingerprint == first.fingerprint)

        let moved = try parse(fullYAML.replacing("https://api.example.com/p", with: "https://api.example.com/q"))
        #expect(moved.fingerprint != first.fingerprint)
        let paged = try parse(fullYAML.replacing("size: 100", with: "size: 50"))
        #expect(paged.fingerprint != first.fingerprint)

        // A fixed value: FNV-1a over the canonical text, the same in every process.
        let tiny = Job(sources: [JobSource(name: "a", url: "https://x.test", pagination: .link(), items: .root)])
        #expect(tiny.fingerprint == FNV1a.hex64(tiny.canonicalDescription))
        #expect(FNV1a.hex64("") == "cbf29ce484222325")
        #expect(FNV1a.hex64("a") == "af63dc4c8601ec8c")
    }

    @Test func redactorRoundTrips() throws {
        let job = try parse(fullYAML)
        let redactor = job.redactor(environment: environment)
        let token = "ghp_s3cr3t/+x"
        let message = "GET https://x.test/a?access_token=ghp_s3cr3t%2F%2Bx&page=2 failed with Bearer \(token)"
        let redacted = redactor.redact(message)
        #expect(
            redacted
                == "GET https://x.test/a?access_token=${GITHUB_TOKEN:url}&page=2 failed with Bearer ${GITHUB_TOKEN}")
        #expect(!redacted.contains("s3cr3t"))
        #expect(redactor.unredact(redacted) == message)
        #expect(redactor.redact("q=ghp_s3cr3t%2f%2bx") == "q=${GITHUB_TOKEN:url}")
        #expect(redactor.redact("k=key+1 and key%201") == "k=${API_KEY:url} and ${API_KEY:url}")
        #expect(redactor.redact("nothing here") == "nothing here")

        let empty = job.redactor(environment: ["GITHUB_TOKEN": "", "API_KEY": ""])
        #expect(empty.isEmpty)
        #expect(empty.redact("abc") == "abc")
    }

    @Test func unitIDsNeverContainSecrets() throws {
        let units = try parse(fullYAML).units(environment: environment)
        for unit in units {
            #expect(!unit.id.contains("s3cr3t"))
            #expect(!unit.id.contains("key 1"))
        }
        #expect(units.contains { $0.request.headers["Authorization"]?.contains("s3cr3t") == true })
    }

    @Test func programmaticJobsAreValidated() throws {
        let job = Job(sources: [
            JobSource(name: "a", url: "https://x.test/{nope}", pagination: .link(), items: .root),
        ])
        #expect(throws: JobSpecError.self) { try job.units(environment: [:]) }
        let twice = Job(sources: [
            JobSource(name: "a", url: "https://x.test/1", pagination: .link(), items: .root),
            JobSource(name: "a", url: "https://x.test/2", pagination: .link(), items: .root),
        ])
        do {
            _ = try twice.units(environment: [:])
            Issue.record("expected an error")
        } catch {
            #expect(error.field == "sources[1].name")
        }
    }
}

@Suite(.hangGuard) struct JobDefinitionPaginationSpecTests {
    @Test func specsAndOptions() throws {
        #expect(try PaginationStyle.parse("link") == .link())
        #expect(try PaginationStyle.parse(" Page ") == .page())
        #expect(try PaginationStyle.parse("offset") == .offset())
        #expect(try PaginationStyle.parse("next:links.next") == .nextURL(at: "links.next"))
        #expect(try PaginationStyle.parse("cursor:meta.next") == .cursor(at: "meta.next", param: "cursor"))
        #expect(
            try PaginationStyle.parse("cursor:data.-1.id", options: PaginationOptions(cursorParam: "starting_after"))
                == .cursor(at: "data.-1.id", param: "starting_after", hasMore: "has_more"))
        #expect(
            try PaginationStyle.parse("page", options: PaginationOptions(sizeParam: "per_page", size: 50, total: "n"))
                == .page(sizeParam: "per_page", size: 50, totalItems: "n"))
        #expect(
            try PaginationStyle.parse("offset", options: PaginationOptions(total: "total", limitParam: nil, limit: 100))
                == .offset(limit: 100, total: "total"))
        #expect(try PaginationStyle.parse("link", options: PaginationOptions(param: "p")) == .link(pageParam: "p"))
        #expect(
            try PaginationStyle.parse("page", options: PaginationOptions(pages: 2...5)) == .page(pages: 2...5))
    }

    @Test func specErrors() {
        func message(_ spec: String, _ options: PaginationOptions = PaginationOptions()) -> JobSpecError? {
            do {
                _ = try PaginationStyle.parse(spec, options: options)
            } catch {
                return error
            }
            return nil
        }
        #expect(
            message("pages")?.description
                == "unknown style 'pages' (use link, page, offset, cursor:KEYPATH or next:KEYPATH)")
        #expect(message("cursor")?.message == "cursor pagination needs the key path of the next cursor")
        #expect(message("next")?.message == "next pagination needs the key path of the next page's URL")
        #expect(message("page", PaginationOptions(limit: 3))?.option == "limit")
        #expect(message("link:x") != nil)
        #expect(message("next:")?.message == "'next:' has an empty key path")
        #expect(message("page", PaginationOptions(size: 0))?.option == "size")
        #expect(message("cursor:a..b")?.option == "cursor")
    }

    @Test func keyPathValidation() throws {
        #expect(try JSONKeyPath.validated("") == .root)
        #expect(try JSONKeyPath.validated("$") == .root)
        #expect(try JSONKeyPath.validated("$.data.-1.id") == "data.-1.id")
        #expect(try JSONKeyPath.validated(#"a\.b"#) == JSONKeyPath(components: [.key("a.b")]))
        for bad in ["a..b", ".a", "a.", #"a\"#, "$."] {
            #expect(throws: JobSpecError.self, "\(bad)") { try JSONKeyPath.validated(bad) }
        }
    }
}

@Suite(.hangGuard) struct JobDefinitionShardTests {
    private func units(_ count: Int) throws -> [WorkUnit] {
        let job = Job(sources: [
            JobSource(name: "s", url: "https://x.test/{n}", pagination: .link(), items: .root,
                matrix: [try MatrixAxis.range("n", "1..\(count)")])
        ])
        return try job.units(environment: [:])
    }

    @Test func shardsPartitionTheUnits() throws {
        let all = try units(1000)
        let shards = try (0..<3).map { try Shard.parse("\($0)/3") }
        let parts = shards.map { shard in Set(all.filter(shard.contains).map(\.id)) }
        #expect(parts.map(\.count).reduce(0, +) == 1000)
        #expect(parts[0].union(parts[1]).union(parts[2]) == Set(all.map(\.id)))
        #expect(parts[0].isDisjoint(with: parts[1]) && parts[0].isDisjoint(with: parts[2]))
        #expect(parts[1].isDisjoint(with: parts[2]))
        #expect(parts.allSatisfy { $0.count > 250 && $0.count < 420 })
        // Stable: the same split in every process.
        #expect(try Shard.parse("0/3").contains(id: "s n=1") == (FNV1a.hash64("s n=1") % 3 == 0))
        #expect(try Shard.parse("0/1").contains(all[0]))
    }

    @Test func parseShards() throws {
        #expect(try Shard.parse("2/8") == Shard(index: 2, count: 8))
        #expect(try Shard.parse("2/8").description == "2/8")
        // Each refusal says what is wrong with that text (not merely that something is).
        let usage = " (write INDEX/COUNT with a 0-based index, as in 0/4)"
        let refusals = [
            ("4/4", "shard index 4 is out of range for 4 shards (indices are 0-based: 0 to 3)"),
            ("8/8", "shard index 8 is out of range for 8 shards (indices are 0-based: 0 to 7)"),
            ("-1/4", "shard index -1 is out of range for 4 shards (indices are 0-based: 0 to 3)"),
            ("1/0", "the shard count must be at least 1, not 0"),
            ("a/4", "shard index 'a' in 'a/4' is not a number" + usage),
            ("1/x", "shard count 'x' in '1/x' is not a number" + usage),
            ("1", "'1' is not a shard" + usage),
            ("1/2/3", "'1/2/3' is not a shard" + usage),
            ("", "'' is not a shard" + usage),
        ]
        for (bad, message) in refusals {
            let error = #expect(throws: JobSpecError.self, "\(bad)") { try Shard.parse(bad) }
            #expect(error?.description == message, "\(bad)")
        }
    }

    @Test func shardsFromKubernetes() throws {
        #expect(try Shard.fromEnvironment(["JOB_COMPLETION_INDEX": "2"], shardCount: 8) == Shard(index: 2, count: 8))
        #expect(throws: JobSpecError.self) { try Shard.fromEnvironment(["JOB_COMPLETION_INDEX": "2"], shardCount: nil) }
        #expect(throws: JobSpecError.self) { try Shard.fromEnvironment(["JOB_COMPLETION_INDEX": "8"], shardCount: 8) }
        #expect(throws: JobSpecError.self) { try Shard.fromEnvironment(["JOB_COMPLETION_INDEX": "x"], shardCount: 8) }
        #expect(try Shard.fromEnvironment([:], shardCount: 8) == nil)
    }

    @Test func shardsFromSlurm() throws {
        let env = ["SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "8"]
        #expect(try Shard.fromEnvironment(env, shardCount: nil) == Shard(index: 4, count: 8))
        #expect(try Shard.fromEnvironment(env, shardCount: 8) == Shard(index: 4, count: 8))
        #expect(throws: JobSpecError.self) { try Shard.fromEnvironment(env, shardCount: 4) }
        let zeroBased = ["SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "3"]
        #expect(try Shard.fromEnvironment(zeroBased, shardCount: nil) == Shard(index: 0, count: 3))
        #expect(throws: JobSpecError.self) {
            try Shard.fromEnvironment(["SLURM_ARRAY_TASK_ID": "0"], shardCount: nil)
        }
        #expect(try Shard.fromEnvironment(["SLURM_ARRAY_TASK_ID": "2"], shardCount: 3) == Shard(index: 2, count: 3))
    }
}

extension MatrixAxis {
    fileprivate func renamed(_ name: String) -> MatrixAxis { MatrixAxis(name: name, values: values) }
}

@Suite("Job limits and the new settings", .hangGuard)
struct JobLimitsTests {
    @Test("a matrix whose product passes a million units is an error naming the axes, before anything is built")
    func matrixProductCapped() throws {
        let text = """
            sources:
              - name: s
                url: "https://x.test/items?a={a}&b={b}&c={c}"
                paginate: link
                items: items
                matrix: {a: "1..1000", b: "1..1000", c: "1..1000"}
            """
        let job = try parse(text)
        do {
            _ = try job.units(environment: [:])
            Issue.record("expected the matrix to be refused")
        } catch {
            #expect(error.description.contains("the matrix expands to 1000000000 units (a: 1000 × b: 1000 × c: 1000)"))
            #expect(error.description.contains("sources[0].matrix"))
        }
        // At the limit it is fine to ask (a thousand here, to keep the test fast).
        let small = try parse(text.replacingOccurrences(of: "c: \"1..1000\"", with: "c: \"1..1\"")
            .replacingOccurrences(of: "b: \"1..1000\"", with: "b: \"1..1\""))
        #expect(try small.units(environment: [:]).count == 1000)
    }

    @Test("trusted_origins, sensitive_headers and stop_on_status are read from settings, and checked")
    func newSettings() throws {
        let job = try parse("""
            settings:
              trusted_origins: ["https://cdn.test"]
              sensitive_headers: [X-Tenant-Key]
              stop_on_status: [404, 410]
            \(source(""))
            """)
        #expect(job.settings.trustedOrigins == ["https://cdn.test"])
        #expect(job.settings.sensitiveHeaders == ["x-tenant-key"])
        #expect(job.settings.stopStatuses == [404, 410])
        #expect(fileError("settings:\n  trusted_origins: [ftp://x]\n" + source(""))?.description.contains("origin") == true)
        #expect(fileError("settings:\n  stop_on_status: [1000]\n" + source(""))?.description.contains("not an HTTP status") == true)
    }
}
