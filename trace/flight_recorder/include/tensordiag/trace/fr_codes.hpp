// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The registry of the Flight Recorder forensics' stable diagnostic codes, TDIAG-FR-NNN: 00N
// reading dumps, 01N culprits (one per cause), 02N what the matching found, 03N notes.
#pragma once

#include <tensordiag/core/codes.hpp>

namespace tdiag::trace::fr::codes {
inline constexpr std::string_view no_dump_file = "TDIAG-FR-001";
inline constexpr std::string_view not_a_dump = "TDIAG-FR-002";
inline constexpr std::string_view malformed_dump = "TDIAG-FR-003";
inline constexpr std::string_view unsupported_version = "TDIAG-FR-004";
inline constexpr std::string_view rank_claimed_twice = "TDIAG-FR-005";
inline constexpr std::string_view no_rank = "TDIAG-FR-006";
inline constexpr std::string_view empty_dump = "TDIAG-FR-007";
inline constexpr std::string_view unreadable_dump = "TDIAG-FR-008";
inline constexpr std::string_view no_entries = "TDIAG-FR-009";
inline constexpr std::string_view not_reached = "TDIAG-FR-010";
inline constexpr std::string_view not_completed = "TDIAG-FR-011";
inline constexpr std::string_view desync = "TDIAG-FR-012";
inline constexpr std::string_view no_dump = "TDIAG-FR-013";
inline constexpr std::string_view rank_beyond_world = "TDIAG-FR-014";
inline constexpr std::string_view mismatch = "TDIAG-FR-020";
inline constexpr std::string_view undetermined = "TDIAG-FR-021";
inline constexpr std::string_view unknown_ranks = "TDIAG-FR-022";
inline constexpr std::string_view all_matched = "TDIAG-FR-030";

/// Every code of the Flight Recorder forensics.
inline constexpr code_entry table[] = {
    {no_dump_file, "no Flight Recorder dump matched"},
    {not_a_dump, "not a Flight Recorder dump"},
    {malformed_dump, "malformed Flight Recorder dump"},
    {unsupported_version, "unsupported Flight Recorder dump version"},
    {rank_claimed_twice, "two dumps claim one rank"},
    {no_rank, "a dump states no rank"},
    {empty_dump, "an empty dump"},
    {unreadable_dump, "a dump that cannot be read: what it held is lost"},
    {no_entries, "no dump holds an entry: nothing about the job can be told"},
    {not_reached, "a rank never reached the collective the others wait in"},
    {not_completed, "a rank reached the collective but its work never completed"},
    {desync, "a rank issued a different collective (desync)"},
    {no_dump, "a rank left no readable dump: the only rank whose progress is unknown"},
    {rank_beyond_world, "a dump's rank is not below --world-size"},
    {mismatch, "first divergence of a process group"},
    {undetermined, "a stuck collective whose holder the evidence cannot tell"},
    {unknown_ranks, "ranks whose part cannot be known"},
    {all_matched, "every collective matched"},
};
} // namespace tdiag::trace::fr::codes
