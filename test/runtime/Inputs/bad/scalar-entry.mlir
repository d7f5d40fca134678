func.func @main(%x: f32) -> f32 {
  return %x : f32
}
