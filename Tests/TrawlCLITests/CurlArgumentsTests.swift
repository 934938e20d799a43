import Foundation
import Testing
import TrawlEngine
import TrawlTestSupport
@testable import trawl

/// `trawl get`'s command line read as curl reads it, without running anything.
@Suite("trawl get: arguments, configs and -w as curl reads them", .hangGuard)
struct CurlArgumentsTests {
    func expand(_ arguments: [String]) throws -> [String] {
        try CurlArguments.normalize(arguments, environment: [:])
    }

    @Test("combined short flags, a value glued to its flag, -C -, scheme-less URLs")
    func shortFlags() throws {
        #expect(try expand(["-sSL", "x.io/a"]) == ["-s", "-S", "-L", "http://x.io/a"])
        #expect(try expand(["-sSfo", "out", "http://h/"]) == ["-s", "-S", "-f", "-o", "out", "http://h/"])
        #expect(try expand(["-oout", "-C", "-", "https://h/"]) == ["-o", "out", "--continue", "https://h/"])
        #expect(try expand(["-m", "5", "--url", "h:8080/x"]) == ["--max-time", "5", "http://h:8080/x"])
        #expect(try expand(["-O", "http://h/f"]) == ["--output=" + Get.remoteNameMarker, "http://h/f"])
        #expect(try expand(["--", "-not-an-option"]) == ["--", "http://-not-an-option"])
    }

    @Test("an unknown option is one, before any URL: with curl's spelling or the nearest alternative")
    func unknownOptions() throws {
        #expect(throws: CurlArguments.Unknown.self) { try expand(["--frobnicate", "3", "http://h/"]) }
        let typo = try #require(throwing { try expand(["--retyr", "3", "http://h/"]) })
        #expect(typo.description == "unknown option '--retyr'. Did you mean '--retry'?")
        let curlOnly = try #require(throwing { try expand(["-T", "f", "http://h/"]) })
        #expect(curlOnly.description.contains("does not support curl's -T yet; nearest: --data-file FILE -X PUT"))
        let bearer = try #require(throwing { try expand(["--oauth2-bearer", "t", "http://h/"]) })
        #expect(bearer.description.contains("-H 'Authorization: Bearer TOKEN'"))
        let glued = try #require(throwing { try expand(["-sQ", "http://h/"]) })
        #expect(glued.description.hasPrefix("unknown option '-Q'"))
        let missing = try #require(throwing { try expand(["http://h/", "-w"]) })
        #expect(missing.description == "-w needs a value")
        // Terminal controls in an unknown option are shown escaped.
        let hostile = try #require(throwing { try expand(["--\u{1B}]0;x\u{07}", "http://h/"]) })
        #expect(!hostile.description.unicodeScalars.contains { $0.value == 0x1B })
    }

    func throwing(_ body: () throws -> [String]) -> CurlArguments.Unknown? {
        do {
            _ = try body()
            return nil
        } catch let error as CurlArguments.Unknown {
            return error
        } catch {
            return nil
        }
    }

    @Test("curlrc: option = value, option: value, option value, dashes optional, quotes, comments")
    func configSyntax() throws {
        let text = """
            # a comment
              silent
            --fail
            -A "agent \\"q\\" \\\\ \\t"
            write-out = "%{http_code}\\n"
            header: X-A: 1
            url http://h/a

            referer=http://r/
            """
        let parsed = try CurlConfig.parse(text, path: "cfg")
        #expect(parsed == ["--silent", "--fail", "-A", "agent \"q\" \\ \t", "--write-out", "%{http_code}\n",
                           "--header", "X-A:", "--url", "http://h/a", "--referer", "http://r/"])
        #expect(throws: CurlArguments.Unknown.self) { try CurlConfig.parse("url \"http://h/", path: "cfg") }
    }

    @Test("-K files, ~/.curlrc only without -K and -q, sizes bounded, depth bounded")
    func configFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trawl-curlrc-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let rc = directory.appendingPathComponent(".curlrc").path
        try Data("-s\n".utf8).write(to: URL(fileURLWithPath: rc))
        let cfg = directory.appendingPathComponent("cfg").path
        try Data("fail\n".utf8).write(to: URL(fileURLWithPath: cfg))
        let home = ["CURL_HOME": directory.path]
        #expect(try CurlArguments.normalize(["http://h/"], environment: home) == ["-s", "http://h/"])
        #expect(try CurlArguments.normalize(["-q", "http://h/"], environment: home) == ["http://h/"])
        // A curl option trawl get does not take, in ~/.curlrc, is skipped (with a warning), not fatal.
        try Data("netrc\n-4\nresolve x:80:127.0.0.1\n-s\n".utf8).write(to: URL(fileURLWithPath: rc))
        #expect(try CurlArguments.normalize(["http://h/"], environment: home) == ["-s", "http://h/"])
        try Data("-s\n".utf8).write(to: URL(fileURLWithPath: rc))
        #expect(try CurlArguments.normalize(["-K", cfg, "http://h/"], environment: home) == ["--fail", "http://h/"])
        let loop = directory.appendingPathComponent("loop").path
        try Data("-K \(loop)\n".utf8).write(to: URL(fileURLWithPath: loop))
        #expect(throws: CurlArguments.Unknown.self) { try CurlArguments.normalize(["-K", loop], environment: [:]) }
        let big = directory.appendingPathComponent("big").path
        try Data(repeating: UInt8(ascii: "#"), count: CurlConfig.maxBytes + 1).write(to: URL(fileURLWithPath: big))
        #expect(throws: CurlArguments.Unknown.self) { try CurlArguments.normalize(["-K", big], environment: [:]) }
        #expect(throws: CurlArguments.Unknown.self) {
            try CurlArguments.normalize(["-K", directory.path], environment: [:])
        }
    }

    @Test("-w: variables, %header{}, escapes, %{stderr}/%{stdout}, unknown variables print nothing")
    func writeOut() {
        var head = ResponseHead(
            status: 404, headers: ["Content-Type": "text/plain", "X-A": "1"], url: "http://h/b",
            httpVersion: .http1_1)
        head.headerSize = 77
        head.redirects = ["http://h/a"]
        let facts = TransferFacts(url: "http://h/a", method: "GET", head: head, bytes: 12, exitCode: 0)
        var warnings: [String] = []
        let pieces = WriteOut(format: "%{http_code} %{size_download} %{size_header} %{num_redirects}\\t"
            + "%{url_effective} %{content_type} %header{x-a}|%{http_version} 100%% %{nope}\\n%{stderr}%{exitcode}"
        ).render(facts) { warnings.append($0) }
        #expect(pieces.map(\.text) == ["404 12 77 1\thttp://h/b text/plain 1|1.1 100% \n", "0"])
        #expect(pieces.map(\.toStderr) == [false, true])
        #expect(warnings == ["unknown --write-out variable: 'nope'"])
        #expect(
            WriteOut.headerJSON(["A": "1", "a": "2", "B": "\u{1B}"]) == "{\"a\":[\"1\",\"2\"],\n\"b\":[\"\\u001b\"]\n}")
        #expect(WriteOut.seconds(.microseconds(1_234_567)) == "1.234567")
    }

    @Test("-O names: the URL's last segment, never a path out of the directory")
    func remoteNames() {
        #expect(Get.remoteName("http://h/dir/file.tar.gz?x=1#f") == "file.tar.gz")
        #expect(Get.remoteName("http://h/a/..%2F..%2Fetc") == "..%2F..%2Fetc")
        #expect(Get.remoteName("http://h/a/..") == nil)
        #expect(Get.remoteName("http://h/") == nil)
        #expect(Get.remoteName("http://h") == nil)
        #expect(Get.remoteName("http://h/a\\..\\b") == nil)
        #expect(Get.remoteName("http://h/x\u{1B}[2J") == nil)
    }

    @Test("cookie files: Netscape lines matched by host, path, secure and expiry; Set-Cookie lines")
    func cookies() {
        var jar = CookieFile()
        jar.parse("""
            # Netscape HTTP Cookie File
            h.io\tFALSE\t/\tFALSE\t0\ta\t1
            .h.io\tTRUE\t/api\tTRUE\t0\tb\t2
            #HttpOnly_h.io\tFALSE\t/\tFALSE\t1\told\tgone
            other.io\tFALSE\t/\tFALSE\t0\tc\t3
            Set-Cookie: d=4; Path=/
            """)
        #expect(jar.matching("http://h.io/x").map(\.name) == ["a"])
        #expect(jar.matching("https://w.h.io/api/v1").map(\.name) == ["b"])
        var received = CookieFile()
        received.receive(["s=1; Domain=evil.io; Path=/", "t=2; HttpOnly"], url: "http://h.io/")
        #expect(received.cookies.map(\.domain) == ["h.io", "h.io"], "a server cannot set cookies for another domain")
        #expect(received.netscapeText.hasSuffix(
            "h.io\tFALSE\t/\tFALSE\t0\ts\t1\n#HttpOnly_h.io\tFALSE\t/\tFALSE\t0\tt\t2\n"))
    }
}
