// `make fuzz`: a libFuzzer target over BackupKit, built by swiftc with
// `-sanitize=fuzzer,address` outside SwiftPM, so the normal build and `make test` never see
// it. An input is one file, or two joined by a NUL byte (which a backup, being UTF-8 JSON
// with control characters escaped, never holds). A broken property stops the run with
// fatalError, which libFuzzer reports as a crash and saves the input under .build/fuzz/.

import BackupKit

/// The document's canonical bytes, as `migrate` writes them.
private func canonical(_ document: BackupDocument) -> [UInt8] {
    BackupWriter.write(document)
}

private func require(_ holds: Bool, _ property: @autoclosure () -> String) {
    if !holds { fatalError("property broken: \(property())") }
}

/// read → validate → migrate → write → read back: what the writer wrote reads as schema 3,
/// and writing that gives the same bytes (compact or pretty).
private func roundTrip(_ document: BackupDocument) -> BackupDocument {
    let written = canonical(document)
    guard let again = try? BackupReader.read(written) else {
        fatalError(
            "the writer's own output does not read back: \(String(decoding: written, as: UTF8.self))"
        )
    }
    require(again.sourceVersion == BackupDocument.currentSchemaVersion, "read back as schema 3")
    require(canonical(again.document) == written, "write → read → write is the same bytes")
    let pretty = BackupWriter.write(document, pretty: true)
    guard let fromPretty = try? BackupReader.read(pretty) else {
        fatalError("the pretty output does not read back")
    }
    require(canonical(fromPretty.document) == written, "pretty and compact hold the same document")
    return again.document
}

/// A merge's result is a valid document, and merging it with itself changes nothing.
private func checkMerge(_ local: BackupDocument, _ incoming: BackupDocument) {
    let options = MergeOptions(now: max(local.exportedAt, incoming.exportedAt))
    let merged = merge(local: local, incoming: incoming, options: options).document
    let result = roundTrip(merged)
    let itself = merge(local: result, incoming: result, options: options)
    require(canonical(itself.document) == canonical(result), "merge(m, m) is m")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)
    let parts = input.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
    let documents = parts.compactMap { part in
        let kept = try? BackupReader.read(Array(part))
        // The read that gives the day logs' pages back as it goes (whole pages of a part
        // over 4 KiB, at the end of its day logs) must read the same.
        let handedOver = try? BackupReader.read(consuming: Array(part))
        require(kept == handedOver, "a read that hands its bytes over reads as one that keeps them")
        return kept?.document
    }
    let read = documents.map(roundTrip)
    if let first = read.first {
        checkMerge(first, first)
    }
    if read.count == 2 {
        checkMerge(read[0], read[1])
        checkMerge(read[1], read[0])
    }
    return 0
}
