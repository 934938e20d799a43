#if canImport(Glibc)
import Glibc
#endif

// SwiftPM links an executable on Linux with `main` defined as `<module>_main` (the module is built with
// -parse-as-library here, like every module of the fuzz build), so libFuzzer's own `main` stays out of the link
// and this entry point hands the command line to libFuzzer's driver (flags, corpus folders, crash files).
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

@_cdecl("TrawlFuzz_main")
public func fuzzMain(
    _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
) -> CInt {
    _ = selectedTarget  // refuses an unknown TRAWL_FUZZ_TARGET before libFuzzer starts
    var count = argc
    var arguments = Optional(argv)
    return runFuzzerDriver(&count, &arguments, fuzzOneInput)
}
