import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a job file with plain `read(2)`, so that a pipe, a FIFO or a process substitution
/// (`trawl fetch <(make-job)`) works as a file does (Foundation's `Data(contentsOf:)` refused `/dev/fd/63` as
/// "You don't have permission"), and says what is wrong in words (never an `NSCocoaErrorDomain` number).
enum JobFileReading {
    /// A job file is a few kilobytes; past this it is not a job file, and reading on would hold it all in memory.
    static let limit = 16 * 1024 * 1024

    static func read(_ path: String) throws(JobFileError) -> Data {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(path, errno) }
        defer { close(descriptor) }
        var status = stat()
        if fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR {
            throw failure(path, EISDIR)
        }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(path, errno)
            }
            data.append(contentsOf: buffer[..<count])
            guard data.count <= limit else {
                throw JobFileError(
                    file: path, message: "the job file is larger than \(limit / 1024 / 1024) MB",
                    hint: "a job file describes sources; is this the right file?")
            }
        }
        return data
    }

    private static func failure(_ path: String, _ code: Int32) -> JobFileError {
        switch code {
        case ENOENT:
            return JobFileError(file: path, message: "cannot read the job file: no such file", hint: "check the path")
        case EISDIR:
            return JobFileError(
                file: path, message: "cannot read the job file: it is a directory",
                hint: "name the job file itself: a .yaml, .yml or .json file")
        case EACCES, EPERM:
            return JobFileError(
                file: path, message: "cannot read the job file: permission denied", hint: "check its permissions")
        default:
            return JobFileError(
                file: path, message: "cannot read the job file: \(String(cString: strerror(code)))",
                hint: "check the path and permissions")
        }
    }
}
