import GoogleDrive
import Testing

private let kib = 1024

@Test func resumableWalksTheWorkedExample() {
    var upload = ResumableUpload(total: 600 * kib, chunkSize: 256 * kib)
    #expect(upload.start() == .initiate)
    #expect(upload.handle(.initiated(session: "http://s/1")) == .send(offset: 0, count: 256 * kib))
    #expect(
        upload.handle(.incomplete(received: 256 * kib))
            == .send(offset: 256 * kib, count: 256 * kib))
    #expect(upload.handle(.connectionLost) == .queryStatus)
    #expect(
        upload.handle(.incomplete(received: 384 * kib))
            == .send(offset: 384 * kib, count: 216 * kib))
    #expect(
        upload.handle(.completed(status: 200, body: [1, 2]))
            == .finished(status: 200, body: [1, 2]))
    #expect(upload.received == 600 * kib)
}

@Test func resumableStartsOverWhenTheSessionExpires() {
    var upload = ResumableUpload(total: 600 * kib, chunkSize: 256 * kib)
    _ = upload.start()
    _ = upload.handle(.initiated(session: "http://s/1"))
    _ = upload.handle(.incomplete(received: 512 * kib))
    #expect(upload.handle(.sessionExpired) == .initiate)
    #expect(upload.session == nil)
    #expect(upload.received == 0)
    #expect(upload.handle(.initiated(session: "http://s/2")) == .send(offset: 0, count: 256 * kib))
}

@Test func resumableRetriesTheSessionStartWhenItHasNone() {
    var upload = ResumableUpload(total: 600 * kib, chunkSize: 256 * kib)
    _ = upload.start()
    #expect(upload.handle(.connectionLost) == .initiate)
}

@Test func resumableAsksForTheFinalAnswerWhenAllBytesArrived() {
    var upload = ResumableUpload(total: 512 * kib, chunkSize: 256 * kib)
    _ = upload.start()
    _ = upload.handle(.initiated(session: "http://s/1"))
    #expect(upload.handle(.incomplete(received: 512 * kib)) == .queryStatus)
}

@Test(arguments: [(1, 256), (256 * 1024, 256), (256 * 1024 + 1, 512), (8 * 1024 * 1024, 8192)])
func chunksAreWholeMultiplesOf256KiB(requested: Int, expectedKiB: Int) {
    #expect(ResumableUpload(total: 1, chunkSize: requested).chunkSize == expectedKiB * kib)
}

@Test(arguments: [
    (String?.none, Int?.some(0)), ("bytes=0-0", 1), ("bytes=0-262143", 262_144), ("bytes=5-9", nil),
    ("junk", nil),
])
func rangeHeaderSaysHowMuchArrived(header: String?, received: Int?) {
    #expect(ResumableUpload.received(fromRange: header) == received)
}
