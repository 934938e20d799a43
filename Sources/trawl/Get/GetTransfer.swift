import ArgumentParser
import Foundation
import Trawl
import TrawlEngine

#if canImport(Glibc)
    import Glibc
#endif

/// A failure of `trawl get` with curl's exit code; the message is already printed (or silenced by `-s`).
struct CurlExitFailure: Error {
    let code: Int32
}

/// Where one URL's body goes.
enum Destination: Equatable {
    case stdout
    case file(String)
    /// `-O`: named by the URL (or, with `-J`, by the server) inside the output directory.
    case remote
}

extension Get {
    /// Marks a `-O` among the `-o` values, so that each URL gets the output given in its place (curl pairs the
    /// n-th `-o`/`-O` with the n-th URL).
    static let remoteNameMarker = "\u{0}remote-name"

    /// The destination of each URL, in order.
    var destinations: [Destination] {
        var queue = outputs.map { $0 == Self.remoteNameMarker ? Destination.remote : .file($0) }
        if curl.remoteName, !outputs.contains(Self.remoteNameMarker) { queue.append(.remote) }
        return urls.map { _ in queue.isEmpty ? .stdout : queue.removeFirst() }
    }

    /// Prints a failure. Unlike curl, `-s` alone does not hide it: `-s` has meant "no progress bar" in trawl, and
    /// scripts rely on the reason being on stderr (curl users get what they type with `-sS`).
    func report(_ text: String) {
        FileHandle.standardError.write(Data((TerminalText.safe(text) + "\n").utf8))
    }

    func runTransfers() async throws {
        let client = try makeClient()
        let writeOut = try curl.writeOut.map { WriteOut(format: try Self.readWriteOut($0)) }
        let plan = Array(zip(urls, destinations))
        var codes: [Int32] = []
        if curl.parallel, plan.count > 1 {
            let limit = max(1, curl.parallelMax)
            codes = await withTaskGroup(of: (Int, Int32).self) { group in
                var results = [Int32](repeating: 0, count: plan.count)
                var next = 0
                while next < min(limit, plan.count) {
                    let index = next
                    group.addTask { (index, await self.transfer(plan[index].0, to: plan[index].1, client, writeOut)) }
                    next += 1
                }
                while let (index, code) = await group.next() {
                    results[index] = code
                    if next < plan.count {
                        let index = next
                        group.addTask {
                            (index, await self.transfer(plan[index].0, to: plan[index].1, client, writeOut))
                        }
                        next += 1
                    }
                }
                return results
            }
        } else {
            for (url, destination) in plan {
                codes.append(await transfer(url, to: destination, client, writeOut))
            }
        }
        if let failed = codes.last(where: { $0 != 0 }) { throw CurlExitFailure(code: failed) }
    }

    private func makeClient() throws -> Client {
        var config = Client.Configuration()
        tls.apply(to: &config, environment: ProcessInfo.processInfo.environment)
        config.httpVersion = httpVersion.preference ?? .http2
        config.proxy = curl.proxy.map { $0.contains("://") ? $0 : "http://" + $0 }
        config.noProxy = curl.noProxy
        config.proxyCredentials = curl.proxyUser
        if let userAgent = curl.userAgent { config.userAgent = userAgent }
        return Client(configuration: config)
    }

    /// `-w @FILE` (or `@-`) read, up to 64 KiB.
    static func readWriteOut(_ format: String) throws -> String {
        guard format.hasPrefix("@") else { return format }
        let path = String(format.dropFirst())
        let bytes: [UInt8]
        if path == "-" {
            bytes = Array(FileHandle.standardInput.readData(ofLength: (64 << 10) + 1))
        } else {
            // Read no more than the limit and one byte: a device or a huge file named by mistake is not slurped.
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw ValidationError("-w @\(path): cannot read the format file")
            }
            defer { try? handle.close() }
            bytes = Array((try? handle.read(upToCount: (64 << 10) + 1)) ?? Data())
        }
        guard bytes.count <= 64 << 10 else {
            throw ValidationError("-w @\(path): the format file is larger than 64 KiB")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// One URL, with `--retry`: returns curl's exit code for it.
    func transfer(_ url: String, to destination: Destination, _ client: Client, _ writeOut: WriteOut?) async -> Int32 {
        let started = ContinuousClock.now
        var delay = curl.retryDelay ?? 1
        var attempt = 0
        while true {
            var facts = TransferFacts(url: url, method: curl.head ? "HEAD" : (method ?? "GET"))
            let retryable = await attemptTransfer(url, to: destination, client, facts: &facts)
            facts.elapsed = ContinuousClock.now - started
            // A 429 or 503 with Retry-After: SECONDS waits that long, as curl does (at most 10 minutes here).
            let wait = facts.head?.headers["Retry-After"].flatMap { Int($0) }.map { Double(min(max($0, 0), 600)) }
                ?? delay
            let elapsed = Double(facts.elapsed.components.seconds)
            let withinTime = curl.retryMaxTime.map { elapsed + wait < $0 } ?? true
            if retryable, attempt < curl.retry, withinTime {
                attempt += 1
                report("warning: transient problem; will retry in \(Int(wait)) seconds, "
                    + "\(curl.retry - attempt) retries left")
                try? await Task.sleep(for: .milliseconds(Int64(wait * 1000)))
                if curl.retryDelay == nil { delay = min(delay * 2, 600) }
                continue
            }
            if let writeOut { emit(writeOut, facts) }
            return facts.exitCode
        }
    }

    private func emit(_ writeOut: WriteOut, _ facts: TransferFacts) {
        let pieces = writeOut.render(facts) { warning in report("warning: \(warning)") }
        for piece in pieces {
            if piece.toStderr {
                let text = Terminal.standardErrorIsTerminal ? TerminalText.escapingControls(piece.text) : piece.text
                FileHandle.standardError.write(Data(text.utf8))
            } else {
                try? OutputWriting.write(Array(piece.text.utf8), to: STDOUT_FILENO, name: "the output")
            }
        }
    }

    /// One attempt; fills `facts` (exit code, head, bytes) and says whether `--retry` may try again.
    private func attemptTransfer(
        _ url: String, to destination: Destination, _ client: Client, facts: inout TransferFacts
    ) async -> Bool {
        func fail(_ code: Int32, _ message: String, retryable: Bool = false) -> Bool {
            facts.exitCode = code
            facts.errorMessage = message
            report("error: \(message)")
            return retryable
        }
        // -f: %{errormsg} is curl's sentence; stderr also says which request (several URLs may run).
        func failStatus(_ status: Int, retryable: Bool) -> Bool {
            facts.exitCode = CurlExit.httpError
            facts.errorMessage = "The requested URL returned error: \(status)"
            report("error: \(facts.method) \(url): the requested URL returned error: \(status)")
            return retryable
        }
        var request: Request
        do {
            request = try requestFor(url)
        } catch let problem as CurlURLProblem {
            return fail(problem.code, problem.message)
        } catch let failure as CLIFailure {
            return fail(CurlExit.readError, failure.description.replacingOccurrences(of: "error: ", with: ""))
        } catch {
            return fail(CurlExit.readError, "\(error)")
        }
        facts.method = request.method.rawValue
        if curl.verbose { verboseRequest(request) }
        if destination != .stdout, !curl.head, !Self.writesInPlace(destinationPath(destination, url: url) ?? "") {
            return await downloadAttempt(request, to: destination, client, facts: &facts)
        }
        var sink: FileHandle?
        let path = destinationPath(destination, url: url)
        let bar = ProgressBar(enabled: !silent && Terminal.standardErrorIsTerminal)
        if request.body != nil { request.onProgress = { bar.upload($0) } }
        defer { bar.finish() }
        do {
            let response = try await client.stream(request)
            // The upload is over once the head is here: end its bar before the body reaches the terminal.
            bar.finish()
            facts.head = response.head
            if curl.verbose { verboseResponse(response.head) }
            let status = response.status
            // curl retries 408, 429, 500, 502, 503 and 504 with or without -f (without it, each answer's body is
            // written); --retry-all-errors adds every other status of 400 or more under -f.
            let transient = CurlExit.isTransient(status: status) || (curl.retryAllErrors && curl.fail && status >= 400)
            // -I prints the head even when -f then fails the transfer (curl does).
            if curl.head, status >= 400, curl.fail {
                try OutputWriting.write(Array(headText(response.head).utf8), to: STDOUT_FILENO, name: "the output")
            }
            if status >= 400, curl.fail {
                return failStatus(status, retryable: transient)
            }
            if let path {
                let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
                guard descriptor >= 0 else {
                    let reason = String(cString: strerror(errno))
                    return fail(CurlExit.writeError, "cannot create output file '\(path)': \(reason)")
                }
                sink = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
                facts.file = path
            }
            let descriptor = sink?.fileDescriptor ?? STDOUT_FILENO
            if include || curl.head {
                try OutputWriting.write(Array(headText(response.head).utf8), to: descriptor, name: "the output")
            }
            var pacer = limitRate.map { RatePacer(bytesPerSecond: $0) }
            for try await chunk in response.body {
                try OutputWriting.write(chunk, to: descriptor, name: path.map { "'\($0)'" } ?? "the output")
                facts.bytes += Int64(chunk.count)
                try await pacer?.consumed(chunk.count)
            }
            try saveEtag(response.head)
            try saveCookies(response.head, url: url)
            if status >= 400, curl.failWithBody {
                return failStatus(status, retryable: transient)
            }
            return transient
        } catch let error as TrawlError {
            let code = CurlExit.code(for: error)
            if curl.removeOnError, let path, !Self.writesInPlace(path) { unlink(path) }
            return fail(code, "\(error)", retryable: CurlExit.isTransient(
                code, connectionRefused: curl.retryConnectionRefused, all: curl.retryAllErrors))
        } catch let failure as OutputWriteFailure {
            if failure.closed { facts.exitCode = CurlExit.writeError; return false }
            return fail(CurlExit.writeError, failure.description)
        } catch let failure as CLIFailure {
            return fail(CurlExit.writeError, failure.description.replacingOccurrences(of: "error: ", with: ""))
        } catch {
            return fail(CurlExit.writeError, "\(error)")
        }
    }

    /// `-o FILE`, `-O`, `-J`: through `FILE.part`, moved into place when complete; `--continue` resumes it.
    private func downloadAttempt(
        _ request: Request, to destination: Destination, _ client: Client, facts: inout TransferFacts
    ) async -> Bool {
        var options = DownloadOptions()
        options.resume = resume
        options.expectedSHA256 = sha256
        options.maxBytesPerSecond = limitRate
        let bar = ProgressBar(enabled: !silent && Terminal.standardErrorIsTerminal)
        options.onProgress = { bar.download($0) }
        let path = destinationPath(destination, url: request.url)
        do {
            let result: DownloadResult
            if destination == .remote, curl.remoteHeaderName {
                let directory = curl.outputDir ?? "."
                result = try await client.download(request, intoDirectory: directory, options: options)
            } else if let path {
                try checkOutputDirectory(path)
                result = try await client.download(request, to: path, options: options)
            } else {
                facts.exitCode = CurlExit.writeError
                report("error: -O: the URL \(RequestOption.shown(request.url)) has no file name in its path;"
                    + " use -o FILE")
                return false
            }
            bar.finish()
            facts.head = result.head
            facts.bytes = result.bytes - result.resumedFrom
            facts.file = result.path
            if curl.verbose { verboseResponse(result.head) }
            if include {
                try OutputWriting.write(Array(headText(result.head).utf8), to: STDOUT_FILENO, name: "the output")
            }
            try saveEtag(result.head)
            try saveCookies(result.head, url: request.url)
            let note = path.map { Self.resumeNote(result, output: $0) } ?? ""
            if !note.isEmpty { FileHandle.standardError.write(Data(TerminalText.safe(note).utf8)) }
            return false
        } catch var error as TrawlError {
            bar.finish()
            if let status = error.status, error.code == .unexpectedStatus {
                facts.head = ResponseHead(status: status, headers: error.headers ?? [:], url: error.url)
                facts.exitCode = CurlExit.httpError
                facts.errorMessage = "The requested URL returned error: \(status)"
                report("error: \(error)")
                return CurlExit.isTransient(status: status)
            }
            let code = CurlExit.code(for: error)
            let retryable = CurlExit.isTransient(
                code, connectionRefused: curl.retryConnectionRefused, all: curl.retryAllErrors)
            facts.exitCode = code
            facts.errorMessage = error.message
            let partial = (path ?? "") + ".part"
            if curl.removeOnError, path != nil { unlink(partial) }
            let kept = (try? FileManager.default.attributesOfItem(atPath: partial))?[.size] as? NSNumber
            guard path != nil, Self.leavesResumablePart.contains(error.code), (kept?.int64Value ?? 0) > 0 else {
                report("error: \(error)")
                return retryable
            }
            // The engine's hint speaks of the library's resume option; say it the CLI's way instead.
            error.hint = nil
            error.remedy = nil
            report("error: \(error)\nthe partial file \(partial) is kept: rerun with --continue to resume it")
            return retryable
        } catch let failure as OutputWriteFailure {
            bar.finish()
            facts.exitCode = CurlExit.writeError
            if !failure.closed { report("trawl: \(failure.description)") }
            return false
        } catch let failure as CLIFailure {
            bar.finish()
            facts.exitCode = CurlExit.writeError
            report(failure.description)
            return false
        } catch {
            bar.finish()
            facts.exitCode = CurlExit.writeError
            report("error: \(FileErrorText.describe(error) ?? "\(error)")")
            return false
        }
    }

    /// The file a destination names (`nil` for stdout, and for `-O -J`, named only by the response).
    func destinationPath(_ destination: Destination, url: String) -> String? {
        let name: String
        switch destination {
        case .stdout: return nil
        case .file(let file):
            name = file
        case .remote:
            guard let remote = Self.remoteName(url) else { return nil }
            name = remote
        }
        var path = name
        if let directory = curl.outputDir, !name.hasPrefix("/") {
            path = (directory.hasSuffix("/") ? directory : directory + "/") + name
        }
        if curl.createDirs {
            let parent = PathName.parent(of: path)
            if !parent.isEmpty {
                try? FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
            }
        }
        if curl.noClobber, FileManager.default.fileExists(atPath: path) {
            for number in 1..<100 where !FileManager.default.fileExists(atPath: "\(path).\(number)") {
                return "\(path).\(number)"
            }
        }
        return path
    }

    /// `-O`: the last segment of the URL's path, as curl takes it (not decoded), when it is a usable file name.
    static func remoteName(_ url: String) -> String? {
        var rest = Substring(url)
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        rest = rest.prefix(while: { $0 != "?" && $0 != "#" })
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let path = rest[slash...]
        let last = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        guard !last.isEmpty, last != ".", last != "..", !last.contains("\\"),
            !last.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { return nil }
        return last
    }

    /// The head as `-i` and `-I` print it: the status line as received, the fields, an empty line.
    func headText(_ head: ResponseHead) -> String {
        var text = (head.statusLine ?? "\(head.httpVersion.rawValue) \(head.status)") + "\r\n"
        for (name, value) in head.headers { text += "\(name): \(value)\r\n" }
        return text + "\r\n"
    }
}
