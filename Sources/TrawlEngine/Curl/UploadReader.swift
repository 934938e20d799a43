import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Feeds a request body to libcurl's read callback: from memory, from a file (read as it is sent), or
/// from an async sequence pumped by a task into a small bounded buffer.
final class UploadReader: @unchecked Sendable {
    enum ReadResult {
        case bytes(Int)
        /// Nothing buffered yet: the read callback pauses the send side until the pump adds data.
        case wouldBlock
        case failed(String, (any Error & Sendable)?)
    }

    private enum Source {
        case bytes([UInt8], offset: Int)
        case file(FileHandle, path: String)
        case stream(UploadStream)
    }

    private var source: Source
    /// Bytes to send, when known (sets Content-Length; otherwise chunked).
    let length: Int64?

    /// Opens the body's source. Files are opened here so a missing file fails before anything is sent.
    init(body: RequestBody, method: String, url: String) throws {
        switch body.source {
        case .bytes(let bytes):
            source = .bytes(bytes, offset: 0)
            length = Int64(bytes.count)
        case .file(let path):
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw TrawlError(
                    code: .bodySourceFailed, message: "cannot open request body file '\(path)'",
                    hint: "check that the file exists and is readable", method: method, url: url)
            }
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
            source = .file(handle, path: path)
            length = size
        case .stream(let sequence, let streamLength):
            source = .stream(UploadStream(sequence))
            length = streamLength
        }
    }

    /// Starts pumping a stream body; `wake` is called when data arrives after a `.wouldBlock`.
    func start(wake: @escaping @Sendable () -> Void) {
        if case .stream(let stream) = source { stream.start(wake: wake) }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        switch source {
        case .bytes(let bytes, let offset):
            let count = min(buffer.count, bytes.count - offset)
            guard count > 0 else { return .bytes(0) }
            bytes.withUnsafeBytes { raw in
                UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + count)]))
            }
            source = .bytes(bytes, offset: offset + count)
            return .bytes(count)
        case .file(let handle, let path):
            // Straight into libcurl's buffer: no intermediate Data per chunk.
            while true {
                let count = Glibc.read(handle.fileDescriptor, buffer.baseAddress, buffer.count)
                if count >= 0 { return .bytes(count) }
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                return .failed("reading request body file '\(path)' failed: \(reason)", nil)
            }
        case .stream(let stream):
            return stream.read(into: buffer)
        }
    }

    /// Stops the pump and closes the file.
    func close() {
        switch source {
        case .bytes: break
        case .file(let handle, _): try? handle.close()
        case .stream(let stream): stream.stop()
        }
    }
}

/// A bounded buffer filled by a task iterating the caller's async sequence.
final class UploadStream: Sendable {
    private struct State {
        var chunks: [[UInt8]] = []
        var head = 0  // offset into chunks[0]
        var buffered = 0
        var finished = false
        var failure: (any Error & Sendable)?
        var readerBlocked = false
        var spaceWaiter: CheckedContinuation<Void, Never>?
        var pump: Task<Void, Never>?
        var stopped = false
    }

    private let state = Mutex(State())
    private let sequence: any AsyncSequence<[UInt8], any Error> & Sendable
    private let highWater = 256 << 10

    init(_ sequence: any AsyncSequence<[UInt8], any Error> & Sendable) {
        self.sequence = sequence
    }

    func start(wake: @escaping @Sendable () -> Void) {
        let task = Task { [self] in
            do {
                for try await chunk in sequence {
                    if Task.isCancelled { return }
                    await waitForSpace()
                    if append(chunk) { wake() }
                }
                if markFinished(failure: nil) { wake() }
            } catch {
                if markFinished(failure: error) { wake() }
            }
        }
        state.withLock { $0.pump = task }
    }

    private func waitForSpace() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.buffered < highWater || state.stopped { return true }
                state.spaceWaiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Returns whether the reader was blocked (and so needs a wake-up).
    private func append(_ chunk: [UInt8]) -> Bool {
        guard !chunk.isEmpty else { return false }
        return state.withLock { state in
            state.chunks.append(chunk)
            state.buffered += chunk.count
            defer { state.readerBlocked = false }
            return state.readerBlocked
        }
    }

    private func markFinished(failure: (any Error)?) -> Bool {
        state.withLock { state in
            state.finished = true
            if let failure { state.failure = SendableError(failure) }
            defer { state.readerBlocked = false }
            return state.readerBlocked
        }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> UploadReader.ReadResult {
        typealias Outcome = (UploadReader.ReadResult, CheckedContinuation<Void, Never>?)
        let (result, waiter) = state.withLock { state -> Outcome in
            var written = 0
            while written < buffer.count, !state.chunks.isEmpty {
                let chunk = state.chunks[0]
                let count = min(buffer.count - written, chunk.count - state.head)
                let head = state.head
                chunk.withUnsafeBytes { raw in
                    UnsafeMutableRawBufferPointer(rebasing: buffer[written..<(written + count)])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[head..<(head + count)]))
                }
                written += count
                state.head += count
                state.buffered -= count
                if state.head == chunk.count {
                    state.chunks.removeFirst()
                    state.head = 0
                }
            }
            var waiter: CheckedContinuation<Void, Never>?
            if state.buffered < highWater { waiter = state.spaceWaiter; state.spaceWaiter = nil }
            if written > 0 { return (.bytes(written), waiter) }
            if state.finished {
                if let failure = state.failure {
                    return (.failed("the request body stream failed", failure), waiter)
                }
                return (.bytes(0), waiter)
            }
            state.readerBlocked = true
            return (.wouldBlock, waiter)
        }
        waiter?.resume()
        return result
    }

    func stop() {
        let (task, waiter) = state.withLock { state in
            state.stopped = true
            defer { state.spaceWaiter = nil }
            return (state.pump, state.spaceWaiter)
        }
        waiter?.resume()
        task?.cancel()
    }
}

/// Carries a non-Sendable error's description across threads.
struct SendableError: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ error: any Error) { description = String(describing: error) }
}
