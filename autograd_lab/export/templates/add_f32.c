/* y = a + b with broadcasting (AL_BROADCAST_F32). */
AL_BROADCAST_F32(al_add_f32, +)
