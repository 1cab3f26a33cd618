import { describe, expect, test } from "bun:test"
import { sniffDocument } from "../../src/documents/DocumentKind.ts"
import { JPEG, PDF, PNG } from "../support/photos.ts"

const bytes = (...values: Array<number>) => new Uint8Array(values)
const text = (value: string) => new TextEncoder().encode(value)

describe("sniffDocument (design §5: JPEG, PNG or PDF by content)", () => {
  test.each([
    ["a JPEG", JPEG, "image/jpeg"],
    ["a PNG", PNG, "image/png"],
    ["a PDF", PDF, "application/pdf"],
    ["JPEG magic alone", bytes(0xff, 0xd8, 0xff), "image/jpeg"],
    ["two of JPEG's three magic bytes", bytes(0xff, 0xd8), undefined],
    ["PNG with a corrupted 8th byte", bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x00), undefined],
    ["%PDF without the dash", text("%PDF1.7"), undefined],
    ["plain text", text("hello"), undefined],
    ["HTML", text("<!doctype html><html>"), undefined],
    ["GIF", text("GIF89a"), undefined],
    ["WebP", text("RIFF\u0000\u0000\u0000\u0000WEBP"), undefined],
    ["SVG", text("<svg xmlns='http://www.w3.org/2000/svg'/>"), undefined],
    ["empty", new Uint8Array(0), undefined]
  ] as const)("%s", (_, input, expected) => {
    expect(sniffDocument(input)).toBe(expected)
  })
})
