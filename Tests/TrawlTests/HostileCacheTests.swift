import Foundation
import Testing
import TrawlTestSupport

@testable import Trawl
@testable import TrawlEngine

private func temporaryDirectory() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("trawl-hostile-cache-\(UUID())").path
}

private func mode(_ path: String) -> Int? {
    (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int
}

/// Stores `headers` with body `{}` for `request`, as a page's exchange does; whether it was stored.
private func store(_ cache: DiskResponseCache, _ request: Request, _ headers: HTTPHeaders) -> Bool {
    let key = ResponseCacheKey(request)
    guard cache.mayStore(request, key, headers: headers), let writer = cache.writer(for: key, headers: headers)
    else { return false }
    writer.append(Array("{}".utf8))
    writer.commit()
    return cache.lookup(key) != nil
}

@Suite("The response cache under hostile input: split no-store, modes, echoed credentials, records", .hangGuard)
struct HostileCacheTests {
    @Test("Cache-Control: no-store on a second line is honoured as on one line")
    func noStoreOnASecondLine() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try DiskResponseCache(directory: directory, isPrivate: true)
        let request = Request(url: "https://api.example.com/items")
        let split = HTTPHeaders([("ETag", "\"v\""), ("Cache-Control", "max-age=600"), ("Cache-Control", "no-store")])
        #expect(!store(cache, request, split))
        #expect(store(cache, request, HTTPHeaders([("ETag", "\"v\""), ("Cache-Control", "max-age=600")])))
    }

    @Test("a private response to a credentialed request is stored 0600 in a 0700 directory")
    func filesAreOwnerOnly() throws {
        let parent = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let directory = parent + "/cache"
        let cache = try DiskResponseCache(directory: directory, isPrivate: true)
        var request = Request(url: "https://api.example.com/me")
        request.headers["Authorization"] = "Bearer s3cret-token"
        #expect(store(cache, request, HTTPHeaders([("ETag", "\"v\""), ("Cache-Control", "private")])))
        #expect(mode(directory) == 0o700)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(files.count == 2, "\(files)")
        for file in files { #expect(mode(directory + "/" + file) == 0o600, "\(file)") }
    }

    @Test("a response whose headers echo a credential (a Link with ?access_token=…) is not written to the cache")
    func echoedCredentialIsNotStored() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try DiskResponseCache(directory: directory, isPrivate: true)
        let request = Request(url: "https://api.example.com/items?access_token=tok-123456&page=1")
        let link = "<https://api.example.com/items?access_token=tok-123456&page=2>; rel=\"next\""
        #expect(!store(cache, request, HTTPHeaders([("ETag", "\"v\""), ("Link", link)])))
        var bearer = Request(url: "https://api.example.com/items")
        bearer.headers["Authorization"] = "Bearer tok-abcdef"
        #expect(!store(cache, bearer, HTTPHeaders([("ETag", "\"v\""), ("X-Echo", "you sent tok-abcdef")])))
        let plain = "<https://api.example.com/items?page=2>; rel=\"next\""
        #expect(store(cache, bearer, HTTPHeaders([("ETag", "\"v\""), ("Link", plain), ("Location", "/x?a=1")])))
        for file in try FileManager.default.contentsOfDirectory(atPath: directory) {
            let text = (try? String(contentsOfFile: directory + "/" + file, encoding: .utf8)) ?? ""
            #expect(!text.contains("tok-") && !text.contains("/x?a=1"), "\(file): \(text)")
        }
    }

    @Test("a cache record on disk is parsed only when it is small and of the record's shape")
    func recordsAreBounded() {
        let good = #"{"headers":[["ETag","\"v\""]],"length":2,"sha256":"\#(String(repeating: "a", count: 64))"}"#
        #expect(DiskResponseCache.record(Data(good.utf8)) != nil)
        let bad = [
            #"{"headers":[["ETag"]],"length":2,"sha256":"\#(String(repeating: "a", count: 64))"}"#,
            #"{"headers":[],"length":-1,"sha256":"\#(String(repeating: "a", count: 64))"}"#,
            #"{"headers":[],"length":2,"sha256":"zz"}"#,
            String(repeating: "[", count: 100_000),
            "{\"headers\":[" + Array(repeating: "[\"a\",\"b\"]", count: 1001).joined(separator: ",")
                + "],\"length\":2,\"sha256\":\"\(String(repeating: "a", count: 64))\"}",
        ]
        for text in bad { #expect(DiskResponseCache.record(Data(text.utf8)) == nil, "\(text.prefix(60))") }
        #expect(DiskResponseCache.record(Data(repeating: 0x20, count: DiskResponseCache.longestRecord + 1)) == nil)
    }

    @Test("an OAuth2 token URL over http must be a loopback literal or localhost, never a lookalike name")
    func tokenURLLoopbackIsALiteral() {
        for url in ["http://127.0.0.1.nip.example/token", "http://127.attacker.example/token", "http://localhost.x/t"] {
            #expect(OAuth2ClientCredentialsAdapter.tokenURLProblem(url) != nil, "\(url)")
        }
        for url in ["http://127.0.0.1:8080/token", "http://[::1]/token", "http://localhost/token", "https://a.io/t"] {
            #expect(OAuth2ClientCredentialsAdapter.tokenURLProblem(url) == nil, "\(url)")
        }
    }

    @Test("auth_token, private_token and session_token query values are redacted")
    func moreTokenNamesAreRedacted() {
        let url = "https://x.io/a?auth_token=s1&private_token=s2&session_token=s3&page=2"
        #expect(
            Redaction.url(url, names: Redaction.defaultQueryNames)
                == "https://x.io/a?auth_token=REDACTED&private_token=REDACTED&session_token=REDACTED&page=2")
    }
}
