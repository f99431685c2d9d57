import Foundation
import Testing

@testable import CloudBackupCLI

/// What a progress line writes to a terminal's stderr.
private final class Captured: @unchecked Sendable {
    var text = ""
}

private func progressLine() -> (ProgressLine, Captured) {
    let captured = Captured()
    let context = Context(
        environment: [:], stdout: { _ in }, stderr: { captured.text += $0 }, stderrIsTerminal: true)
    return (ProgressLine(context: context), captured)
}

@Test func smallTransfersShowNothing() {
    let (line, captured) = progressLine()
    line.upload(512 * 1024, 1 << 20)
    line.upload(1 << 20, 1 << 20)
    #expect(captured.text.isEmpty)
}

@Test func aLargeUploadRewritesOneLineAndEndsIt() {
    let (line, captured) = progressLine()
    let total = 4 << 20
    for sent in [0, 1 << 20, 1 << 20, 2 << 20, total] { line.upload(sent, total) }
    #expect(
        captured.text
            == "\ruploading 4.0 MiB: 0%\ruploading 4.0 MiB: 25%\ruploading 4.0 MiB: 50%\ruploading 4.0 MiB: 100%\n"
    )
}
