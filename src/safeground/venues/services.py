"""Every write about grounds."""

from pathlib import Path

from django.db import transaction

from safeground.accounts.models import Organisation

from .models import (
    Block,
    BlockAdjacency,
    Concourse,
    Exit,
    Gate,
    Ground,
    Layout,
    LayoutZone,
    Stand,
    Tier,
    Turnstile,
    Zone,
    ZoneBlock,
)
from .venue_file import VenueFileError, VenueSpec, venue_file_read


def venue_import(*, path: Path, organisation: Organisation) -> Ground:
    """Create a ground from a venue file: all of it, or nothing if the file has any error."""
    venue = venue_file_read(path=path)
    with transaction.atomic():
        # Replacing a ground would orphan the fixtures, tickets and incidents that point at its
        # blocks; until that is designed, a ground is imported once.
        if Ground.objects.filter(code=venue.ground.code).exists():
            raise VenueFileError(
                [
                    f"{path}:{venue.ground.line}: ground.code: a ground '{venue.ground.code}' "
                    "already exists; this version does not replace a ground"
                ]
            )
        return _venue_write(venue=venue, organisation=organisation)


def _venue_write(*, venue: VenueSpec, organisation: Organisation) -> Ground:
    """Write a checked venue file, part by part, each part in bulk (one query per table)."""
    ground = _ground_write(venue=venue, organisation=organisation)
    blocks = _blocks_write(ground=ground, venue=venue)
    _gates_write(ground=ground, venue=venue, blocks=blocks)
    _concourses_write(ground=ground, venue=venue, blocks=blocks)
    zones = _zones_write(ground=ground, venue=venue, blocks=blocks)
    _exits_write(ground=ground, venue=venue, blocks=blocks)
    _layouts_write(ground=ground, venue=venue, zones=zones)
    _adjacency_write(ground=ground, venue=venue, blocks=blocks)
    return ground


def _ground_write(*, venue: VenueSpec, organisation: Organisation) -> Ground:
    spec = venue.ground
    return Ground.objects.create(
        organisation=organisation,
        code=spec.code,
        name=spec.name,
        layout_note=spec.layout_note,
        plan_width=spec.plan_width,
        plan_height=spec.plan_height,
        pitch_shape=spec.pitch,
        level_rate=spec.flow.level_rate,
        stair_rate=spec.flow.stair_rate,
        egress_minutes=spec.flow.egress_minutes,
        evacuation_minutes=spec.flow.evacuation_minutes,
        ticket_prefix=spec.tickets.prefix,
        ticket_length=spec.tickets.length,
        ticket_check=spec.tickets.check,
    )


def _blocks_write(*, ground: Ground, venue: VenueSpec) -> dict[str, Block]:
    """The stands, their tiers and the blocks in them; the blocks by code, as the gates,
    concourses, zones, exits and neighbours of the file name them."""
    stands = {
        stand.code: stand
        for stand in Stand.objects.bulk_create(
            Stand(
                ground=ground,
                code=s.code,
                name=s.name,
                names=s.names,
                p_factor=s.p_factor,
                s_factor=s.s_factor,
            )
            for s in venue.stands
        )
    }
    tiers = {
        (tier.stand.code, tier.code): tier
        for tier in Tier.objects.bulk_create(
            Tier(stand=stands[s.code], code=t.code, name=t.name, names=t.names)
            for s in venue.stands
            for t in s.tiers
        )
    }
    return {
        block.code: block
        for block in Block.objects.bulk_create(
            Block(
                ground=ground,
                tier=tiers[b.stand, b.tier],
                code=b.code,
                name=b.name,
                names=b.names,
                capacity=b.capacity,
                rows=b.rows,
                seats_per_row=b.seats_per_row,
                first_seat=b.first_seat,
                shape=b.shape,
            )
            for b in venue.blocks
        )
    }


def _gates_write(*, ground: Ground, venue: VenueSpec, blocks: dict[str, Block]) -> None:
    """The gates, their turnstiles and the blocks each gate serves."""
    gates = Gate.objects.bulk_create(
        Gate(ground=ground, code=g.code, name=g.name, names=g.names, position=g.position)
        for g in venue.gates
    )
    Turnstile.objects.bulk_create(
        Turnstile(gate=gate, code=code)
        for gate, spec_gate in zip(gates, venue.gates, strict=True)
        for code in spec_gate.turnstiles
    )
    Gate.blocks.through.objects.bulk_create(
        Gate.blocks.through(gate=gate, block=blocks[code])
        for gate, spec_gate in zip(gates, venue.gates, strict=True)
        for code in spec_gate.serves
    )


def _concourses_write(*, ground: Ground, venue: VenueSpec, blocks: dict[str, Block]) -> None:
    concourses = Concourse.objects.bulk_create(
        Concourse(ground=ground, code=c.code, name=c.name, names=c.names) for c in venue.concourses
    )
    Concourse.blocks.through.objects.bulk_create(
        Concourse.blocks.through(concourse=concourse, block=blocks[code])
        for concourse, spec_concourse in zip(concourses, venue.concourses, strict=True)
        for code in spec_concourse.serves
    )


def _zones_write(*, ground: Ground, venue: VenueSpec, blocks: dict[str, Block]) -> list[Zone]:
    """The zones and their blocks, whole or from a first to a last row."""
    zones = Zone.objects.bulk_create(
        Zone(
            ground=ground,
            code=z.code,
            name=z.name,
            names=z.names,
            kind=z.kind,
            is_default=z.is_default,
        )
        for z in venue.zones
    )
    ZoneBlock.objects.bulk_create(
        ZoneBlock(
            zone=zone,
            block=blocks[member.block],
            first_row=member.first_row,
            last_row=member.last_row,
        )
        for zone, spec_zone in zip(zones, venue.zones, strict=True)
        for member in spec_zone.members
    )
    return zones


def _exits_write(*, ground: Ground, venue: VenueSpec, blocks: dict[str, Block]) -> None:
    exits = Exit.objects.bulk_create(
        Exit(
            ground=ground,
            code=e.code,
            name=e.name,
            width=e.width,
            kind=e.kind,
            emergency_only=e.emergency_only,
        )
        for e in venue.exits
    )
    Exit.blocks.through.objects.bulk_create(
        Exit.blocks.through(exit=exit_, block=blocks[code])
        for exit_, spec_exit in zip(exits, venue.exits, strict=True)
        for code in spec_exit.serves
    )


def _layouts_write(*, ground: Ground, venue: VenueSpec, zones: list[Zone]) -> None:
    """The layouts and the use (home, away, buffer) each gives its zones."""
    layouts = Layout.objects.bulk_create(
        Layout(ground=ground, code=layout.code, name=layout.name) for layout in venue.layouts
    )
    zone_ids = {zone.code: zone for zone in zones}
    LayoutZone.objects.bulk_create(
        LayoutZone(layout=layout, zone=zone_ids[code], use=use)
        for layout, spec_layout in zip(layouts, venue.layouts, strict=True)
        for code, use in spec_layout.zones.items()
    )


def _adjacency_write(*, ground: Ground, venue: VenueSpec, blocks: dict[str, Block]) -> None:
    # Stored once per pair, lower id first (the table's check constraint): a lookup for one
    # block's neighbours asks both columns.
    pairs = {
        (min(blocks[a].pk, blocks[b].pk), max(blocks[a].pk, blocks[b].pk))
        for a, b in venue.adjacency
    }
    BlockAdjacency.objects.bulk_create(
        BlockAdjacency(ground=ground, block_id=first, neighbour_id=second)
        for first, second in sorted(pairs)
    )
