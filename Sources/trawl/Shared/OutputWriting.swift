import Foundation
import TrawlEngine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The output could not be written: stdout closed (`trawl get URL | head -c 100`) or a full disk. Exit status 23,
/// curl's "failure writing output", with one short line.
struct OutputWriteFailure: Error, CustomStringConvertible {
    let description: String
    /// The reader went away (EPIPE): nothing is wrong with the work, so the line says only that.
    let closed: Bool

    static let exitStatus: Int32 = 23
}

/// Plain `write(2)` loops for the CLI's outputs, with errors said in CLI terms (never a raw Foundation error).
enum OutputWriting {
    /// Writes all of `bytes` to `descriptor`; `name` is what the message calls it ("the output" for stdout).
    static func write(_ bytes: [UInt8], to descriptor: Int32, name: String) throws(OutputWriteFailure) {
        var written = 0
        var failure: Int32 = 0
        bytes.withUnsafeBytes { buffer in
            while written < buffer.count {
                let n = Glibc.write(descriptor, buffer.baseAddress.map { $0 + written }, buffer.count - written)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else {
                    failure = n < 0 ? errno : EIO
                    return
                }
                written += n
            }
        }
        guard failure != 0 else { return }
        if failure == EPIPE {
            throw OutputWriteFailure(description: "\(name) was closed before everything was written", closed: true)
        }
        throw OutputWriteFailure(
            description: "cannot write \(name): \(String(cString: strerror(failure)))", closed: false)
    }
}

/// Foundation's file errors ("Error Domain=NSCocoaErrorDomain Code=512 …") as "'PATH': Not a directory".
enum FileErrorText {
    /// `nil` when `error` is not a Foundation file error.
    static func describe(_ error: Error) -> String? {
        let error = error as NSError
        guard error.domain == NSCocoaErrorDomain || error.domain == NSPOSIXErrorDomain else { return nil }
        let path = (error.userInfo[NSFilePathErrorKey] as? String) ?? (error.userInfo[NSURLErrorKey] as? URL)?.path
        let reason: String
        if let underlying = (error.userInfo[NSUnderlyingErrorKey] as? Error).map({ $0 as NSError }),
            underlying.domain == NSPOSIXErrorDomain
        {
            reason = String(cString: strerror(Int32(underlying.code)))
        } else if error.domain == NSPOSIXErrorDomain {
            reason = String(cString: strerror(Int32(error.code)))
        } else {
            reason = "the file could not be read or written (code \(error.code))"
        }
        return path.map { "'\($0)': \(reason)" } ?? reason
    }
}

/// A report or histogram file the user named (`--report`, `--hgrm`): a regular file is replaced in place, a pipe or
/// device (`/dev/stdout`, a FIFO) written into, and nothing is written through a symbolic link or a file with other
/// hard links planted at the path (an error naming it).
enum ReportFile {
    static func write(_ bytes: [UInt8], to path: String, flag: String) throws {
        do {
            let file = try DurableFile(path: path, truncatingTo: 0, syncingDirectory: false, allowingStream: true)
            defer { file.close() }
            try file.append(bytes)
        } catch let error as FileError {
            throw CLIFailure("error: \(flag): cannot write the report: \(error)")
        }
    }
}
