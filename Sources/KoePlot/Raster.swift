import CRsvg

/// A cairo image surface of 32-bit pixels, owned and destroyed with the object.
final class ImageSurface {
    let width: Int
    let height: Int
    fileprivate let surface: OpaquePointer

    init(width: Int, height: Int) throws(PlotError) {
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height)),
              cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else {
            throw PlotError("cairo could not make a \(width) x \(height) image")
        }
        self.width = width
        self.height = height
        self.surface = surface
    }

    deinit {
        cairo_surface_destroy(surface)
    }

    /// Fills the pixels from `color(x, y)`, opaque, rows from the top.
    func paint(_ color: (Int, Int) -> RGB) {
        cairo_surface_flush(surface)
        let stride = Int(cairo_image_surface_get_stride(surface))
        let data = cairo_image_surface_get_data(surface)!
        for y in 0..<height {
            let row = UnsafeMutableRawPointer(data + y * stride).assumingMemoryBound(to: UInt32.self)
            for x in 0..<width {
                row[x] = color(x, y).argb
            }
        }
        cairo_surface_mark_dirty(surface)
    }

    /// The image as a PNG file's bytes.
    func png() throws(PlotError) -> [UInt8] {
        var buffer = koe_png_buffer()
        defer { free(buffer.bytes) }
        guard koe_png_encode(surface, &buffer) == CAIRO_STATUS_SUCCESS, let bytes = buffer.bytes else {
            throw PlotError("cairo could not encode a PNG")
        }
        return Array(UnsafeBufferPointer(start: bytes, count: buffer.length))
    }
}

/// An SVG document parsed by librsvg, owned and released with the object.
final class SVGDocument {
    private let handle: UnsafeMutablePointer<RsvgHandle>

    init(_ svg: String) throws(PlotError) {
        var error: UnsafeMutablePointer<GError>?
        let bytes = Array(svg.utf8)
        let handle = bytes.withUnsafeBufferPointer { rsvg_handle_new_from_data($0.baseAddress, gsize($0.count), &error) }
        guard let handle else { throw PlotError("librsvg could not read the SVG: " + Self.message(taking: error)) }
        self.handle = handle
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(handle))
    }

    /// The document drawn into an image `scale` times its size in SVG pixels.
    func rasterized(width: Double, height: Double, scale: Double) throws(PlotError) -> ImageSurface {
        let image = try ImageSurface(width: Int((width * scale).rounded()), height: Int((height * scale).rounded()))
        guard let context = cairo_create(image.surface) else { throw PlotError("cairo could not draw") }
        defer { cairo_destroy(context) }
        var viewport = RsvgRectangle(x: 0, y: 0, width: width * scale, height: height * scale)
        var error: UnsafeMutablePointer<GError>?
        guard rsvg_handle_render_document(handle, context, &viewport, &error) != 0 else {
            throw PlotError("librsvg could not draw the SVG: " + Self.message(taking: error))
        }
        return image
    }

    private static func message(taking error: UnsafeMutablePointer<GError>?) -> String {
        guard let error else { return "unknown error" }
        defer { g_error_free(error) }
        return error.pointee.message.map { String(cString: $0) } ?? "unknown error"
    }
}

/// An opaque colour, 0...1 a channel.
struct RGB: Equatable {
    var red: Double
    var green: Double
    var blue: Double

    /// cairo's native 32-bit pixel: alpha, red, green, blue from the high byte down.
    var argb: UInt32 {
        func byte(_ value: Double) -> UInt32 { UInt32((min(max(value, 0), 1) * 255).rounded()) }
        return 0xFF00_0000 | byte(red) << 16 | byte(green) << 8 | byte(blue)
    }

    /// As SVG writes it: `#rrggbb`.
    var hex: String {
        let value = argb & 0xFF_FFFF
        let digits = String(value, radix: 16)
        return "#" + String(repeating: "0", count: 6 - digits.count) + digits
    }
}
