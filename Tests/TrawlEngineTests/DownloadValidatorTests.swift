import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlEngine
import TrawlTestServer

@Suite("Resume decisions from the response head alone", .hangGuard)
struct ResumeAnswerTests {
    let etag = "\"v1\""
    let date = "Sun, 13 Sep 2020 12:26:40 GMT"

    func answer(_ status: Int, _ headers: HTTPHeaders, from: Int64 = 100, validator: String) -> ResumeAnswer {
        ResumeAnswer(status: status, headers: headers, resumeFrom: from, validator: validator)
    }

    @Test("a 206 is appended only when it starts at the offset and carries the recorded validator")
    func partialContent() {
        let range = "bytes 100-999/1000"
        #expect(answer(206, ["Content-Range": range, "ETag": etag], validator: etag) == .append(total: 1000))
        #expect(answer(206, ["Content-Range": range, "Last-Modified": date], validator: date) == .append(total: 1000))
        #expect(answer(206, ["Content-Range": "bytes 100-999/*", "ETag": etag], validator: etag) == .append(total: nil))
        // Another validator: the resource changed under a server that ignored If-Range.
        #expect(answer(206, ["Content-Range": range, "ETag": "\"v2\""], validator: etag) == .restart)
        #expect(
            answer(206, ["Content-Range": range, "Last-Modified": "Mon, 14 Sep 2020 12:26:40 GMT"], validator: date)
                == .restart)
        // The validator is missing, or only the other kind is there, or the tag is the weak form of ours.
        #expect(answer(206, ["Content-Range": range], validator: etag) == .restart)
        #expect(answer(206, ["Content-Range": range, "Last-Modified": date], validator: etag) == .restart)
        #expect(answer(206, ["Content-Range": range, "ETag": "W/" + etag], validator: etag) == .restart)
        // Another range, or none.
        #expect(answer(206, ["Content-Range": "bytes 0-899/1000", "ETag": etag], validator: etag) == .restart)
        #expect(answer(206, ["ETag": etag], validator: etag) == .restart)
    }

    @Test("a 416 finishes the file when it says the partial file is whole and no validator contradicts it")
    func rangeNotSatisfiable() {
        // Without a validator the resource may have changed to another of the same length: ask first (issue 22).
        #expect(answer(416, ["Content-Range": "bytes */100"], validator: etag) == .confirm)
        #expect(answer(416, ["Content-Range": "bytes */100", "ETag": etag], validator: etag) == .complete)
        #expect(answer(416, ["Content-Range": "bytes */100", "ETag": "\"v2\""], validator: etag) == .restart)
        #expect(answer(416, ["Content-Range": "bytes */100", "Last-Modified": "x"], validator: date) == .restart)
        #expect(answer(416, ["Content-Range": "bytes */5000"], validator: etag) == .restart)
        #expect(answer(416, [:], validator: etag) == .restart)
    }

    @Test("a 200 or an error status is taken as it is")
    func otherStatuses() {
        #expect(answer(200, ["ETag": etag], validator: etag) == .fresh)
        #expect(answer(404, [:], validator: etag) == .fresh)
    }

    @Test("If-Range uses a strong ETag, else the Last-Modified date; never a weak tag")
    func validatorChoice() {
        #expect(ResumeAnswer.validator(of: ["ETag": etag, "Last-Modified": date]) == etag)
        #expect(ResumeAnswer.validator(of: ["ETag": "W/" + etag, "Last-Modified": date]) == date)
        #expect(ResumeAnswer.validator(of: ["Last-Modified": date]) == date)
        #expect(ResumeAnswer.validator(of: ["ETag": "W/" + etag]) == "")
        #expect(ResumeAnswer.validator(of: [:]) == "")
    }
}

extension DownloadResumeTests {
    @Test(
        "a 206 of a changed resource (If-Range ignored) is not appended: the file is a fresh download of it",
        arguments: ["", "&etag=none"])
    func ifRangeIgnored(etag: String) async throws {
        try await withServer { server in
            let directory = try scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let destination = directory + "/file.bin"
            // Request 1 (seed 0) is cut; request 2 answers the stale range with seed 1's bytes; the restart
            // without a range is request 3, seed 2.
            try await interrupted(server, destination, kept: 600_000, query: "&mode=ignore-if-range" + etag)
            let result = try await resume(server, destination, query: "&mode=ignore-if-range" + etag, hashing: true)
            #expect(result.resumedFrom == 0)
            #expect(result.restarted)
            #expect(result.head.status == 200)
            if etag.isEmpty { #expect(result.head.headers["ETag"] == "\"2-\(Self.size)\"") }
            expectFile(destination, seed: 2)
            var hash = SHA256()
            hash.update(DownloadContent.bytes(0..<Self.size, seed: 2))
            #expect(result.sha256 == hash.hexDigest())
        }
    }

    @Test("a complete partial file of a resource that changed is not kept on a 416 with another validator")
    func staleCompletePartial() async throws {
        try await withServer { server in
            let directory = try scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let destination = directory + "/file.bin"
            let url = server.url("/download/\(Self.size)?mode=ignore-if-range")
            let first = try await Client().download(Request(url: url), to: destination)   // seed 0, whole
            #expect(first.head.headers["ETag"] == "\"0-\(Self.size)\"")
            // Put it back as a finished-but-not-moved partial file with its validator.
            try FileManager.default.moveItem(atPath: destination, toPath: destination + ".part")
            #expect(FileManager.default.createFile(
                atPath: destination + ".part.validator", contents: Data("\"0-\(Self.size)\"".utf8)))
            // Request 2 is a 416 carrying seed 1's ETag; the restart is request 3, seed 2.
            let result = try await resume(server, destination, query: "&mode=ignore-if-range")
            #expect(result.restarted)
            #expect(result.resumedFrom == 0)
            expectFile(destination, seed: 2)
        }
    }

    @Test("with a weak ETag or none, Last-Modified is the If-Range validator and the resume appends", arguments: [
        "&etag=weak", "&etag=none",
    ])
    func resumeByDate(etag: String) async throws {
        try await withServer { server in
            let directory = try scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let destination = directory + "/file.bin"
            try await interrupted(server, destination, kept: 900_000, query: etag)
            let recorded = String(decoding: FileManager.default.contents(atPath: destination + ".part.validator")
                ?? Data(), as: UTF8.self)
            #expect(!recorded.hasPrefix("\"") && !recorded.hasPrefix("W/") && recorded.hasSuffix(" GMT"), "\(recorded)")
            let result = try await resume(server, destination, query: etag)
            #expect(result.resumedFrom == 900_000)
            #expect(!result.restarted)
            #expect(result.head.status == 206)
            #expect(result.head.headers["Content-Range"] == "bytes 900000-\(Self.size - 1)/\(Self.size)")
            // The held request, then the ranged one answered 206 (the date matched If-Range): no restart.
            #expect(server.requestLog.map(\.status) == [200, 206])
            expectFile(destination)
        }
    }

    @Test("starting over cuts the old partial file before recording the new validator")
    func truncatesBeforeRecordingTheValidator() async throws {
        try await withServer { server in
            let directory = try scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let destination = directory + "/file.bin"
            // Old bytes of another version, and a validator that cannot be replaced (a non-empty directory is
            // in the way): the download fails exactly between the two steps.
            #expect(FileManager.default.createFile(
                atPath: destination + ".part", contents: Data(repeating: 0xAB, count: 50_000)))
            try FileManager.default.createDirectory(
                atPath: destination + ".part.validator/blocker", withIntermediateDirectories: true)
            await #expect(throws: FileError.self) {
                _ = try await Client().download(Request(url: server.url("/download/1000")), to: destination)
            }
            #expect(FileManager.default.contents(atPath: destination + ".part") == Data())
            #expect(!FileManager.default.fileExists(atPath: destination))
        }
    }
}
