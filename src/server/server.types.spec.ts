import {
  chatAudience,
  DEFAULT_SESSION_HANDOVER,
  homeGroup,
  inOneNetwork,
  mayHandOver,
  SessionHandoverSetting,
} from './server.types';

const groups: SessionHandoverSetting = {
  mode: 'groups',
  groups: [
    { name: 'east', serverIDs: [1, 2, 3] },
    { name: 'west', serverIDs: [4, 5] },
  ],
  modes: ['TOKEN', 'OFFLINE_REFRESH'],
};

describe('Session handover networks', () => {
  it('off: no network but each server itself; chat reaches every server', () => {
    expect(inOneNetwork(DEFAULT_SESSION_HANDOVER, 1, 2)).toBe(false);
    expect(inOneNetwork(DEFAULT_SESSION_HANDOVER, 1, 1)).toBe(true);
    expect(mayHandOver(DEFAULT_SESSION_HANDOVER, 1, 2, 'TOKEN')).toBe(false);
    expect(chatAudience(DEFAULT_SESSION_HANDOVER, 1)).toBeNull();
  });

  it('all: every server one network', () => {
    const all: SessionHandoverSetting = { ...DEFAULT_SESSION_HANDOVER, mode: 'all' };
    expect(inOneNetwork(all, 1, 9)).toBe(true);
    expect(mayHandOver(all, 1, 9, 'ONLINE')).toBe(true);
    expect(mayHandOver(all, 9, 9, 'ONLINE')).toBe(false);
    expect(chatAudience(all, 9)).toBeNull();
  });

  it('groups: one network per group, a server in none by itself; handover only for the listed modes', () => {
    expect(inOneNetwork(groups, 1, 3)).toBe(true);
    expect(inOneNetwork(groups, 3, 4)).toBe(false);
    expect(inOneNetwork(groups, 6, 7)).toBe(false);
    expect(mayHandOver(groups, 1, 3, 'TOKEN')).toBe(true);
    expect(mayHandOver(groups, 1, 3, 'ONLINE')).toBe(false);
    expect(chatAudience(groups, 2)).toEqual([1, 2, 3]);
    expect(chatAudience(groups, 5)).toEqual([4, 5]);
    expect(chatAudience(groups, 6)).toEqual([6]);
  });
});

describe("A login server's group, as the home-server rule compares it", () => {
  it('groups: its group, or for a server in none every grouped server', () => {
    expect(homeGroup(groups, 2)).toEqual({ inGroup: true, servers: [1, 2, 3] });
    expect(homeGroup(groups, 6)).toEqual({ inGroup: false, servers: [1, 2, 3, 4, 5] });
  });

  it('off and all: no group for any server', () => {
    expect(homeGroup(DEFAULT_SESSION_HANDOVER, 1)).toEqual({ inGroup: false, servers: [] });
    expect(homeGroup({ ...groups, mode: 'all' }, 1)).toEqual({ inGroup: false, servers: [] });
  });
});
