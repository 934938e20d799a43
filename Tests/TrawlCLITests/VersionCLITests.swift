import Foundation
import Testing
import TrawlTestSupport
import TrawlEngine
import TrawlJSON

// `trawl --version`, `trawl -V` and `trawl version`: Trawl's version and the run-time versions of the C libraries.

@Suite("trawl --version names trawl and the libcurl, yajl and zlib it runs with", .endToEnd)
struct VersionCLITests {
    /// The first match of `pattern` in `text` as its capture groups (the whole match first); nil without one.
    static func match(_ pattern: String, in text: String) -> [String]? {
        guard let regex = try? NSRegularExpression(pattern: pattern, options: [.anchorsMatchLines]),
            let found = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text))
        else { return nil }
        return (0..<found.numberOfRanges).map { index in
            Range(found.range(at: index), in: text).map { String(text[$0]) } ?? ""
        }
    }

    @Test("--version: trawl, libcurl 7.x with its TLS backend, yajl 2.x, zlib 1.x, protocols and features; exit 0")
    func versionFlag() async throws {
        let result = try await trawl(["--version"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let text = result.stdout
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.count == 6, "\(text)")
        #expect(Self.match(#"^trawl \S+$"#, in: lines.first ?? "") != nil, "\(text)")

        let curl = try #require(Self.match(#"^libcurl (7\.\d+\.\d+) (\S+)"#, in: text), "\(text)")
        // The version the test process loads is the one the binary loads: the same shared library.
        #expect(curl[1] == LinkedLibraries.curl.version)
        #expect(curl[2] == LinkedLibraries.curl.ssl)
        for library in LinkedLibraries.curl.libraries {
            #expect(lines[1].contains(" " + library), "\(library) missing from \(lines[1])")
        }
        let yajl = try #require(Self.match(#"^yajl (2\.\d+\.\d+)$"#, in: text), "\(text)")
        #expect(yajl[1] == LinkedLibraries.yajl)
        let zlib = try #require(Self.match(#"^zlib (1\.\d+(\.\d+)*)$"#, in: text), "\(text)")
        #expect(zlib[1] == LinkedLibraries.zlib)

        let protocols = try #require(Self.match(#"^Protocols: (.*)$"#, in: text))[1].split(separator: " ")
        #expect(protocols.contains("http") && protocols.contains("https"), "\(protocols)")
        let features = try #require(Self.match(#"^Features: (.*)$"#, in: text))[1].split(separator: " ")
        #expect(features.map(String.init) == LinkedLibraries.curl.features)
        #expect(features.contains("HTTP2") && features.contains("libz"), "\(features)")
    }

    @Test("trawl version and trawl -V print exactly what trawl --version prints")
    func versionCommandAndShortFlag() async throws {
        let flag = try await trawl(["--version"])
        for arguments in [["version"], ["-V"]] {
            let result = try await trawl(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(result.stdout == flag.stdout, "\(arguments)")
            #expect(result.stderr.isEmpty, "\(arguments)")
        }
    }

    @Test("--version is taken only alone: after a subcommand it is that subcommand's usage error")
    func versionFlagOnlyAlone() async throws {
        let result = try await trawl(["get", "--version"])
        #expect(result.status == 2, "\(result.stdout)")
        #expect(!result.stdout.contains("libcurl"))
    }
}
