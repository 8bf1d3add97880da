import Foundation

/// `--open`: the desktop's browser, through xdg-open. A desktop without one is no reason to stop the voice, so a
/// failure is only told.
package enum PanelBrowser {
    /// Hands `url` to xdg-open without waiting for it; `failed` hears why if it cannot be run or fails.
    package static func open(_ url: String, failed: @escaping @Sendable (String) -> Void) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["xdg-open", url]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.terminationHandler = { finished in
            if finished.terminationStatus != 0 {
                failed("xdg-open could not open the panel (exit status \(finished.terminationStatus)); open it by hand: \(url)")
            }
        }
        do {
            try process.run()
        } catch {
            failed("cannot run xdg-open (\(error.localizedDescription)); open the panel by hand: \(url)")
        }
    }
}
